configs configs_kernel_select.cu --kernel scale
