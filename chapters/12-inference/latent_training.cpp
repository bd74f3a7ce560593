#include "chapters/12-inference/latent_training.hpp"
