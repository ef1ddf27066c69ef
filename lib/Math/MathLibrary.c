/*===- MathLibrary.c - Vectorizable elementary functions for kernels ------===*
 *
 * Compiled to LLVM bitcode at build time and linked into every kernel module
 * with its functions internal and always inlined, so that the loop vectorizer
 * sees plain arithmetic instead of opaque libm calls. Everything here is
 * branch-free in spirit: special cases are ternaries that become selects,
 * and rounding uses the add-and-subtract-a-large-constant trick instead of
 * floor/rint, which would be library calls on the baseline x86-64 target.
 *
 * Algorithms are the textbook ones: Cody-Waite range reduction for exp,
 * the atanh series for log, Goldberg's trick for log1p, and for erf two
 * minimax polynomials made for gc (see gc_erff).
 * Functions that are rare in models (trigonometry, double erf and pow) are
 * left to libm by the emitter.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>


static inline uint32_t bitsOfFloat(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}
static inline float floatOfBits(uint32_t u) {
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}
static inline uint64_t bitsOfDouble(double x) {
  uint64_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}
static inline double doubleOfBits(uint64_t u) {
  double x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}

/*--- float ----------------------------------------------------------------*/

/* k rounded to the nearest integer, ties to even, for |k| < 2^22. */
static inline float roundToIntegerf(float k) { return (k + 0x1.8p23f) - 0x1.8p23f; }

/* e^x / 2^n - 1 for the integer n nearest to x / ln 2: Cody-Waite
   reduction (ln 2 in two parts) to r = x - n ln 2, |r| <= ln 2 / 2, and
   e^r - 1 = r + r^2 P(r), P a minimax fit of degree 4 made for gc by
   utils/fit-polynomials.py (relative error 3.1e-9 in e^r). */
static inline float expm1OverPowerOfTwof(float x, float n) {
  float r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187045e-06f;
  float p = 1.381459303e-03f;
  p = p * r + 8.368708363e-03f;
  p = p * r + 4.166838752e-02f;
  p = p * r + 1.666652070e-01f;
  p = p * r + 4.999999345e-01f;
  return (r * r) * p + r;
}

/* e^x = 2^n (1 + q), q from expm1OverPowerOfTwof; within 1 ulp over all
   floats (0.99 on every 7th float; MathLibraryTest.Float32ExpOverAllFloats).
   About 20 vector instructions and no select after the clamp: the clamp
   lets a NaN through (both comparisons fail), which every later operation
   propagates, and it bounds n to [-150, 128], so 2^n is two normal halves
   whose product rounds once into the subnormal range or overflows to
   infinity. n comes from the add-a-large-constant rounding: the integer
   sits in t's low mantissa bits, so t's bits shifted by 23 are n's
   exponent field. */
float gc_expf(float x) {
  const float shifter = 0x1.8p23f;
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  float t = x * 1.44269504088896341f + shifter;
  float q = expm1OverPowerOfTwof(x, t - shifter);
  uint32_t twoToN = bitsOfFloat(t) << 23;
  /* floor(n / 2) in the exponent field; the other half is the rest of n. */
  uint32_t half = (bitsOfFloat(t) << 22) & 0xff800000u;
  float s1 = floatOfBits(half + 0x3f800000u);
  float s2 = floatOfBits(twoToN - half + 0x3f800000u);
  return (q * s1 + s1) * s2;
}

/* e^x for x <= 88, as a softmax's shifted scores (each at most 0) are:
   within 1 ulp, as gc_expf, from x = -87 up; 0 below (e^-87 is 1.6e-38,
   just above the smallest normal float), -inf included. From -87 up, n is
   at least -126, so 2^n is one normal scale and no half is needed, nor a
   clamp at the top: about 14 vector instructions against gc_expf's 20,
   and no subnormal result, which some CPUs compute slowly. (q 2^n may be
   subnormal and round where gc_expf's q 2^(n/2) does not: the two differ
   by an ulp at times.) A NaN gives a NaN (the comparison fails). */
float gc_expf_nonpositive(float x) {
  const float shifter = 0x1.8p23f;
  float xc = x < -87.0f ? -87.0f : x;
  float t = xc * 1.44269504088896341f + shifter;
  float q = expm1OverPowerOfTwof(xc, t - shifter);
  float s = floatOfBits((bitsOfFloat(t) << 23) + 0x3f800000u);
  float e = q * s + s;
  return x < -87.0f ? 0.0f : e;
}

float gc_expm1f(float x) {
  float t = 1.0f / 479001600.0f;
  t = t * x + 1.0f / 39916800.0f;
  t = t * x + 1.0f / 3628800.0f;
  t = t * x + 1.0f / 362880.0f;
  t = t * x + 1.0f / 40320.0f;
  t = t * x + 1.0f / 5040.0f;
  t = t * x + 1.0f / 720.0f;
  t = t * x + 1.0f / 120.0f;
  t = t * x + 1.0f / 24.0f;
  t = t * x + 1.0f / 6.0f;
  t = t * x + 0.5f;
  t = t * x * x + x;
  float big = gc_expf(x) - 1.0f;
  float ax = __builtin_fabsf(x);
  return ax < 1.0f ? t : big;
}

float gc_logf(float x) {
  /* Subnormals are scaled into the normal range first. */
  int sub = x < 0x1p-126f;
  float xs = sub ? x * 0x1p25f : x;
  uint32_t u = bitsOfFloat(xs);
  int32_t e = (int32_t)(u >> 23) - 127 - (sub ? 25 : 0);
  float m = floatOfBits((u & 0x007fffffu) | 0x3f800000u);
  int hi = m > 1.41421356f;
  m = hi ? m * 0.5f : m;
  e = hi ? e + 1 : e;
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float r = 2.0f / 11.0f;
  r = r * z + 2.0f / 9.0f;
  r = r * z + 2.0f / 7.0f;
  r = r * z + 2.0f / 5.0f;
  r = r * z + 2.0f / 3.0f;
  r = r * z;
  float hfsq = 0.5f * f * f;
  float fe = (float)e;
  float res = fe * 0.693145751953125f +
              ((f - (hfsq - s * (hfsq + r))) + fe * 1.428606765330187045e-06f);
  res = x == __builtin_inff() ? x : res;
  res = x == 0.0f ? -__builtin_inff() : res;
  res = x < 0.0f ? __builtin_nanf("") : res;
  return x != x ? x : res;
}

float gc_log1pf(float x) {
  float u = 1.0f + x;
  float res = gc_logf(u) * (x / (u - 1.0f));
  res = u == 1.0f ? x : res;
  return x == __builtin_inff() ? x : res;
}

float gc_tanhf(float x) {
  float ax = __builtin_fabsf(x);
  ax = ax > 9.0f ? 9.0f : ax;
  float t = gc_expm1f(2.0f * ax);
  return __builtin_copysignf(t / (t + 2.0f), x);
}

float gc_sinhf(float x) {
  float ax = __builtin_fabsf(x);
  float t = gc_expm1f(ax);
  float res = 0.5f * (t + t / (t + 1.0f));
  float h = gc_expf(0.5f * ax);
  res = ax > 80.0f ? (0.5f * h) * h : res;
  return __builtin_copysignf(res, x);
}

float gc_coshf(float x) {
  float ax = __builtin_fabsf(x);
  float e = gc_expf(ax);
  float h = gc_expf(0.5f * ax);
  return ax > 80.0f ? (0.5f * h) * h : 0.5f * (e + 1.0f / e);
}

/* log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x| keeps small values'
 * digits; past 2^12, 1 + a^2 rounds to a^2 and log(a) + log(2) is the value,
 * without squaring a huge a. */
float gc_asinhf(float x) {
  float a = __builtin_fabsf(x);
  int big = a > 4096.0f;
  float s = big ? 1.0f : a;
  float small = gc_log1pf(s + s * s / (1.0f + __builtin_sqrtf(1.0f + s * s)));
  float large = gc_logf(a) + 0.693147180559945309f;
  return __builtin_copysignf(big ? large : small, x);
}

/* Below 1, erf(x) = x (1 + P(x^2)); from 1 on, erf(x) = 1 - e^Q(x - 1),
   with Q a fit of log(erfc(x)) on [1, 4] (past 4, 1 - erfc(x) rounds to 1
   in float, so the argument is clamped there). Both are minimax fits made
   for gc by utils/fit-polynomials.py: P of degree 6 in x^2 (erf(x) / x within
   1.2e-9 relative), Q of degree 8 (within 1.2e-8 absolute, so erfc within
   1.2e-8 relative). The result is within 1 ulp over all floats, with
   multiply-adds fused or not (baseline x86-64). Vector lanes need both
   halves computed and one selected: about 25 multiply-adds, with no branch
   and no libm call. */
float gc_erff(float x) {
  float z = x * x;
  float p = 7.853856050e-05f;
  p = p * z - 8.010190952e-04f;
  p = p * z + 5.188327230e-03f;
  p = p * z - 2.685381159e-02f;
  p = p * z + 1.128358514e-01f;
  p = p * z - 3.761262582e-01f;
  p = p * z + 1.283791657e-01f;
  /* The leading x is exact: only the small correction rounds. */
  float small = x + x * p;
  float ax = __builtin_fabsf(x);
  float c = ax > 1.0f ? ax : 1.0f;
  c = c < 4.0f ? c : 4.0f;
  float t = c - 1.0f;
  float q = 1.599810857e-06f;
  q = q * t - 3.249943615e-05f;
  q = q * t + 3.179109473e-04f;
  q = q * t - 2.048137555e-03f;
  q = q * t + 1.006868160e-02f;
  q = q * t - 4.156829661e-02f;
  q = q * t - 8.431077905e-01f;
  q = q * t - 2.638967204e+00f;
  q = q * t - 1.849605522e+00f;
  /* Q lies in [-18.1, -1.8]: 2^n is one normal float. */
  float n = roundToIntegerf(q * 1.44269504088896341f);
  float erfc =
      (1.0f + expm1OverPowerOfTwof(q, n)) * floatOfBits((uint32_t)((int32_t)n + 127) << 23);
  float large = __builtin_copysignf(1.0f - erfc, x);
  float res = ax < 1.0f ? small : large;
  return x != x ? x : res;
}

/*--- double ---------------------------------------------------------------*/

double gc_exp(double x) {
  double k = x * 1.44269504088896338700e+00;
  k = k >= -1100.0 ? k : -1100.0;
  k = k <= 1100.0 ? k : 1100.0;
  double n = (k + 0x1.8p52) - 0x1.8p52;
  double r = x - n * 6.93147180369123816490e-01;
  r = r - n * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t ni = (int64_t)n;
  int64_t n1 = ni >> 1;
  int64_t n2 = ni - n1;
  double s1 = doubleOfBits((uint64_t)(n1 + 1023) << 52);
  double s2 = doubleOfBits((uint64_t)(n2 + 1023) << 52);
  double res = p * s1 * s2;
  res = x < -746.0 ? 0.0 : res;
  return x != x ? x : res;
}

double gc_expm1(double x) {
  /* Taylor series to x^20/20!, enough for |x| < 1 at double precision. */
  double t = 1.0 / 2432902008176640000.0;
  t = t * x + 1.0 / 121645100408832000.0;
  t = t * x + 1.0 / 6402373705728000.0;
  t = t * x + 1.0 / 355687428096000.0;
  t = t * x + 1.0 / 20922789888000.0;
  t = t * x + 1.0 / 1307674368000.0;
  t = t * x + 1.0 / 87178291200.0;
  t = t * x + 1.0 / 6227020800.0;
  t = t * x + 1.0 / 479001600.0;
  t = t * x + 1.0 / 39916800.0;
  t = t * x + 1.0 / 3628800.0;
  t = t * x + 1.0 / 362880.0;
  t = t * x + 1.0 / 40320.0;
  t = t * x + 1.0 / 5040.0;
  t = t * x + 1.0 / 720.0;
  t = t * x + 1.0 / 120.0;
  t = t * x + 1.0 / 24.0;
  t = t * x + 1.0 / 6.0;
  t = t * x + 0.5;
  t = t * x * x + x;
  double big = gc_exp(x) - 1.0;
  return __builtin_fabs(x) < 1.0 ? t : big;
}

double gc_log(double x) {
  int sub = x < 0x1p-1022;
  double xs = sub ? x * 0x1p54 : x;
  uint64_t u = bitsOfDouble(xs);
  int64_t e = (int64_t)(u >> 52) - 1023 - (sub ? 54 : 0);
  double m = doubleOfBits((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  int hi = m > 1.41421356237309504880;
  m = hi ? m * 0.5 : m;
  e = hi ? e + 1 : e;
  double f = m - 1.0;
  double s = f / (2.0 + f);
  double z = s * s;
  double r = 2.0 / 23.0;
  r = r * z + 2.0 / 21.0;
  r = r * z + 2.0 / 19.0;
  r = r * z + 2.0 / 17.0;
  r = r * z + 2.0 / 15.0;
  r = r * z + 2.0 / 13.0;
  r = r * z + 2.0 / 11.0;
  r = r * z + 2.0 / 9.0;
  r = r * z + 2.0 / 7.0;
  r = r * z + 2.0 / 5.0;
  r = r * z + 2.0 / 3.0;
  r = r * z;
  double hfsq = 0.5 * f * f;
  double de = (double)e;
  double res = de * 6.93147180369123816490e-01 +
               ((f - (hfsq - s * (hfsq + r))) + de * 1.90821492927058770002e-10);
  res = x == __builtin_inf() ? x : res;
  res = x == 0.0 ? -__builtin_inf() : res;
  res = x < 0.0 ? __builtin_nan("") : res;
  return x != x ? x : res;
}

double gc_log1p(double x) {
  double u = 1.0 + x;
  double res = gc_log(u) * (x / (u - 1.0));
  res = u == 1.0 ? x : res;
  return x == __builtin_inf() ? x : res;
}

double gc_tanh(double x) {
  double ax = __builtin_fabs(x);
  ax = ax > 20.0 ? 20.0 : ax;
  double t = gc_expm1(2.0 * ax);
  return __builtin_copysign(t / (t + 2.0), x);
}

double gc_sinh(double x) {
  double ax = __builtin_fabs(x);
  double t = gc_expm1(ax);
  double res = 0.5 * (t + t / (t + 1.0));
  double h = gc_exp(0.5 * ax);
  res = ax > 700.0 ? (0.5 * h) * h : res;
  return __builtin_copysign(res, x);
}

/* As gc_asinhf; 1 + a^2 rounds to a^2 past 2^27. */
double gc_asinh(double x) {
  double a = __builtin_fabs(x);
  int big = a > 134217728.0;
  double s = big ? 1.0 : a;
  double small = gc_log1p(s + s * s / (1.0 + __builtin_sqrt(1.0 + s * s)));
  double large = gc_log(a) + 0.69314718055994530942;
  return __builtin_copysign(big ? large : small, x);
}

double gc_cosh(double x) {
  double ax = __builtin_fabs(x);
  double e = gc_exp(ax);
  double h = gc_exp(0.5 * ax);
  return ax > 700.0 ? (0.5 * h) * h : 0.5 * (e + 1.0 / e);
}

/*--- pow ------------------------------------------------------------------*/

/* float pow through double exp and log: y*log|x| carries enough bits that
   the float result is correctly rounded in nearly all cases. */
float gc_powf(float x, float y) {
  float ax = __builtin_fabsf(x);
  float ay = __builtin_fabsf(y);
  /* Floats of magnitude 2^24 and more are even integers. */
  int32_t yi = (int32_t)(ay < 0x1p24f ? y : 0.0f);
  int isInt = ay >= 0x1p24f || (float)yi == y;
  int odd = yi & 1;
  double r = gc_exp((double)y * gc_log((double)ax));
  r = (x < 0.0f && odd) ? -r : r;
  r = (x < 0.0f && !isInt && x != -__builtin_inff()) ? __builtin_nan("") : r;
  /* x = -0 with an odd negative y gives -inf, an odd positive y -0. */
  r = (x == 0.0f && odd) ? __builtin_copysign(r, (double)x) : r;
  int one = y == 0.0f || x == 1.0f || (x == -1.0f && ay == __builtin_inff());
  return one ? 1.0f : (float)r;
}

int64_t gc_powi64(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
  uint64_t result = 1;
  uint64_t b = (uint64_t)base;
  while (exponent) {
    if (exponent & 1)
      result *= b;
    b *= b;
    exponent >>= 1;
  }
  return (int64_t)result;
}

/* Greatest common divisor, non-negative, as torch's gcd (Euclid's). */
int64_t gc_gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
  uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t r = x % y;
    x = y;
    y = r;
  }
  return (int64_t)x;
}

/*--- special functions: gc_digamma, gc_bessel_j0, ... (double only) --------*/

#include "SpecialMath.inc"
