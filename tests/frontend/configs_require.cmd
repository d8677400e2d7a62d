configs configs_require.cu
