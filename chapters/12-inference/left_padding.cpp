#include "chapters/12-inference/left_padding.hpp"
