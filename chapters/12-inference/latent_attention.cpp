#include "chapters/12-inference/latent_attention.hpp"
