// Local header for local_header.cu: a constant and a __device__ helper.
#pragma once

constexpr int kVecWidth = 4;

__device__ inline float clamp01(float v) { return v < 0.f ? 0.f : v > 1.f ? 1.f : v; }
