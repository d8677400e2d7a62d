// Stands in for a system header that libclang parses differently from nvcc: the pragma
// makes it a system header, and its errors do not fail aotc's parse.
#pragma clang system_header

template <class... T> __host__ __device__ int variadic_probe(...);
struct broken { int x = ; };
inline int host_helper() { return undeclared_in_system_header; }
