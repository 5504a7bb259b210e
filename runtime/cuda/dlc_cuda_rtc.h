// What NVRTC lacks of the C and C++ standard headers that the generated kernels and
// scalar_ops.h use: NVRTC compiles without the standard library (math functions and memcpy
// are built in), and a deployment machine need not have the toolkit's headers. Included in
// place of those headers when __CUDACC_RTC__ is defined; kept to what the kernels need.
#ifndef DLC_CUDA_RTC_H
#define DLC_CUDA_RTC_H

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;

#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000) // the quiet NaN math.h gives nvcc and the CPU

namespace std {
template <typename T, T v> struct integral_constant { static constexpr T value = v; };
using true_type = integral_constant<bool, true>;
using false_type = integral_constant<bool, false>;
template <typename A, typename B> struct is_same : false_type {};
template <typename A> struct is_same<A, A> : true_type {};
template <typename A, typename B> constexpr bool is_same_v = is_same<A, B>::value;
template <typename T>
constexpr bool is_floating_point_v = is_same_v<T, float> || is_same_v<T, double>;
template <typename T>
constexpr bool is_integral_v =
    is_same_v<T, bool> || is_same_v<T, int8_t> || is_same_v<T, int16_t> || is_same_v<T, int32_t> ||
    is_same_v<T, int64_t> || is_same_v<T, uint8_t> || is_same_v<T, uint16_t> ||
    is_same_v<T, uint32_t> || is_same_v<T, uint64_t> || is_same_v<T, char> || is_same_v<T, long> ||
    is_same_v<T, unsigned long>;
template <typename T> constexpr bool is_signed_v = T(-1) < T(0);
template <typename T> struct make_unsigned;
template <> struct make_unsigned<int8_t> { using type = uint8_t; };
template <> struct make_unsigned<int16_t> { using type = uint16_t; };
template <> struct make_unsigned<int32_t> { using type = uint32_t; };
template <> struct make_unsigned<int64_t> { using type = uint64_t; };
template <> struct make_unsigned<uint8_t> { using type = uint8_t; };
template <> struct make_unsigned<uint16_t> { using type = uint16_t; };
template <> struct make_unsigned<uint32_t> { using type = uint32_t; };
template <> struct make_unsigned<uint64_t> { using type = uint64_t; };
template <typename T> using make_unsigned_t = typename make_unsigned<T>::type;
} // namespace std

#endif // DLC_CUDA_RTC_H
