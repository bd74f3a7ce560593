#include "chapters/12-inference/cache_memory.hpp"
