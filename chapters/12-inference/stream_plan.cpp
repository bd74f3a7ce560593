#include "chapters/12-inference/stream_plan.hpp"
