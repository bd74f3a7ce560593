// stb_image's implementation, compiled once for the figure tests (which include its header
// to decode the PNG files they draw). Only PNG is needed.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>
