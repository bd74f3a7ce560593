// The one place where the xtensor releases a reader may have (0.24 to 0.27) differ for us:
// 0.26 moved every header into a subfolder (xtensor/xtensor.hpp became
// xtensor/containers/xtensor.hpp, and so on). The framework includes xtensor only here.
#pragma once

#if __has_include(<xtensor/containers/xtensor.hpp>)  // 0.26 and later
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xmath.hpp>
#include <xtensor/core/xnoalias.hpp>
#include <xtensor/core/xtensor_config.hpp>
#else  // 0.24, 0.25
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xtensor_config.hpp>
#endif
