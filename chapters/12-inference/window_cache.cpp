#include "chapters/12-inference/window_cache.hpp"
