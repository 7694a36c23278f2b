// JsonWriter, and the number text of text_format.h: integers, shortest round-trip
// doubles, correctly rounded decimal -> double, without libc and without heap (the exact
// paths use fixed-size big integers on the stack).
//
// format_double: an exact digit generator over big integers (the free-format method of
// Steele & White / Burger & Dybvig). v and the two half-gaps to its neighbouring doubles
// are the exact fractions r/s, m-/s and m+/s; digits come out of r*10/s one at a time
// until the digits so far, or the next one rounded up, lie inside the rounding interval
// of v (closed when v's mantissa is even, since parsing then breaks the tie towards v).
// That gives the shortest text that parses back to v; the last digit is picked to make
// it the nearest such text. Integers below 2^53 skip all that.
//
// parse_double: up to 19 significant digits go into a uint64; when that is exact in a
// double and the power of ten is too (<= 1e22), one IEEE multiplication or division is
// already correctly rounded. Otherwise the value D * 10^E is evaluated exactly: for
// E >= 0 as the big integer D * 5^E (times 2^E), for E < 0 as the 64-bit quotient of
// D / 5^-E by long division, and the top 64 bits plus a sticky bit (any nonzero bit
// below them) are rounded to the double's precision once, normal or subnormal. Digits
// past the 800th significant one are folded into a trailing 1: a rounding boundary of
// binary64 (a midpoint between two doubles) never has more than 768 significant digits,
// so that stand-in rounds like the full text.
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/text_format.h"

namespace mcpgen {
namespace {

// ---------------------------------------------------------------- big integers

// Unsigned big integer over caller-provided storage: little-endian 32-bit limbs, n
// limbs in use, no leading zero limb (n == 0 is zero). Writes never pass `cap` limbs;
// the callers size the storage so that they cannot need to (checked in the tests with
// MCPGEN_TEXT_FORMAT_CHECKED, which traps instead of dropping a carry).
struct Big {
  uint32_t* w;
  int cap;
  int n;
};

inline void big_full() {
#ifdef MCPGEN_TEXT_FORMAT_CHECKED
  __builtin_trap();
#endif
}

void big_set(Big& a, uint64_t v) {
  a.n = 0;
  while (v != 0 && a.n < a.cap) {
    a.w[a.n++] = static_cast<uint32_t>(v);
    v >>= 32;
  }
}

// a = a * m + add
void big_mul_add(Big& a, uint32_t m, uint32_t add) {
  uint64_t carry = add;
  for (int i = 0; i < a.n; ++i) {
    uint64_t t = static_cast<uint64_t>(a.w[i]) * m + carry;
    a.w[i] = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  if (carry != 0) {
    if (a.n < a.cap) {
      a.w[a.n++] = static_cast<uint32_t>(carry);
    } else {
      big_full();
    }
  }
}

void big_mul_pow5(Big& a, int e) {
  while (e > 0) {  // by up to 5^13 (the largest power of 5 in 32 bits) per pass
    uint32_t m = 1;
    for (int k = 0; k < 13 && e > 0; ++k, --e) m *= 5;
    big_mul_add(a, m, 0);
  }
}

// a <<= bits: whole limbs moved up, then the rest as a multiplication by 2^(bits % 32).
void big_shl(Big& a, int bits) {
  if (a.n == 0 || bits <= 0) return;
  int words = bits >> 5;
  if (words > 0) {
    int top = a.n + words;
    if (top > a.cap) {
      big_full();
      top = a.cap;
    }
    for (int i = top - 1; i >= 0; --i) a.w[i] = i >= words ? a.w[i - words] : 0;
    a.n = top;
  }
  big_mul_add(a, uint32_t{1} << (bits & 31), 0);
}

int big_cmp(const Big& a, const Big& b) {
  if (a.n != b.n) return a.n < b.n ? -1 : 1;
  for (int i = a.n - 1; i >= 0; --i) {
    if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
  }
  return 0;
}

// dst = a + b (dst may be a or b)
void big_add(Big& dst, const Big& a, const Big& b) {
  int n = a.n > b.n ? a.n : b.n;
  if (n > dst.cap) n = dst.cap;
  uint64_t carry = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t t = carry;
    if (i < a.n) t += a.w[i];
    if (i < b.n) t += b.w[i];
    dst.w[i] = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  dst.n = n;
  if (carry != 0) {
    if (n < dst.cap) {
      dst.w[dst.n++] = static_cast<uint32_t>(carry);
    } else {
      big_full();
    }
  }
}

// a -= b, requires a >= b
void big_sub(Big& a, const Big& b) {
  int64_t borrow = 0;
  for (int i = 0; i < a.n; ++i) {
    int64_t t = static_cast<int64_t>(a.w[i]) - (i < b.n ? b.w[i] : 0) - borrow;
    borrow = t < 0 ? 1 : 0;
    a.w[i] = static_cast<uint32_t>(t + (borrow << 32));
  }
  while (a.n > 0 && a.w[a.n - 1] == 0) --a.n;
}

int bit_length64(uint64_t v) {
  int n = 0;
  while (v != 0) {
    ++n;
    v >>= 1;
  }
  return n;
}

int big_bits(const Big& a) {
  if (a.n == 0) return 0;
  return (a.n - 1) * 32 + bit_length64(a.w[a.n - 1]);
}

inline uint32_t limb(const Big& a, int i) { return i >= 0 && i < a.n ? a.w[i] : 0; }

// The 64 bits of a starting at bit `pos`; *sticky = any bit below pos is set.
uint64_t big_bits_at(const Big& a, int pos, bool* sticky) {
  int wi = pos >> 5;
  int b = pos & 31;
  uint32_t w0 = limb(a, wi), w1 = limb(a, wi + 1), w2 = limb(a, wi + 2);
  bool st = b != 0 && (w0 & ((uint32_t{1} << b) - 1)) != 0;
  for (int i = 0; i < wi && !st; ++i) st = a.w[i] != 0;
  *sticky = st;
  if (b != 0) {  // 32-bit shifts: a variable 64-bit shift is long code on a 32-bit MCU
    w0 = (w0 >> b) | (w1 << (32 - b));
    w1 = (w1 >> b) | (w2 << (32 - b));
  }
  return w0 | (static_cast<uint64_t>(w1) << 32);
}

// floor(e * log10(2)) for |e| <= 1650 (checked against the exact value for that range).
inline int floor_log10_pow2(int e) { return (e * 78913) >> 18; }

// ---------------------------------------------------------------- double <-> bits

inline uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

inline double double_of(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

// The double nearest to (m + sticky) * 2^e2, ties to even, where `sticky` stands for
// something nonzero but smaller than m's lowest bit. Handles subnormals and overflow.
double make_double(bool neg, uint64_t m, bool sticky, int e2) {
  uint64_t sign = neg ? uint64_t{1} << 63 : 0;
  if (m == 0) return double_of(sign);
  while ((m >> 63) == 0) {
    m <<= 1;
    --e2;
  }
  int lead = e2 + 63;  // m * 2^e2 is in [2^lead, 2^(lead+1))
  if (lead > 1023) return double_of(sign | (uint64_t{0x7FF} << 52));
  int shift = lead >= -1022 ? 11 : 11 + (-1022 - lead);  // low bits of m that go
  if (shift > 64) return double_of(sign);  // below half of the smallest subnormal
  // Drop the low bits one at a time (short code; only the rare exact paths come here):
  // all but the last into sticky, the last one is the rounding bit.
  for (; shift > 1; --shift) {
    sticky = sticky || (m & 1) != 0;
    m >>= 1;
  }
  uint64_t kept = m >> 1;
  if ((m & 1) != 0 && (sticky || (kept & 1) != 0)) ++kept;
  // kept carries the implicit bit for normals, so adding it bumps the exponent field by
  // one; a carry out of the mantissa (or into infinity) falls out of the same sum.
  uint64_t field = lead >= -1022 ? static_cast<uint64_t>(lead + 1022) : 0;
  return double_of(sign | ((field << 52) + kept));
}

// ---------------------------------------------------------------- formatting

constexpr int kFmtLimbs = 38;  // 1216 bits: the largest value below is about 2^1090

// Shortest digits of f * 2^e (f > 0). Writes up to 17 ASCII digits into d and returns
// their count; *x10 is the decimal exponent of the first digit.
int shortest_digits(uint64_t f, int e, bool lower_closer, char* d, int* x10) {
  uint32_t rw[kFmtLimbs], sw[kFmtLimbs], mw[kFmtLimbs], tw[kFmtLimbs];
  Big r{rw, kFmtLimbs, 0}, s{sw, kFmtLimbs, 0}, mm{mw, kFmtLimbs, 0}, t{tw, kFmtLimbs, 0};
  // v = r/s, lower half-gap = mm/s, upper half-gap = mp/s with mp = mm * (1 or 2).
  int extra = lower_closer ? 1 : 0;
  big_set(r, f);
  big_set(s, 1);
  big_set(mm, 1);
  int up = e >= 0 ? e : 0;  // 2^e moves into r and mm when e >= 0, else 2^-e into s
  big_shl(r, up + 1 + extra);
  big_shl(s, up - e + 1 + extra);
  big_shl(mm, up);
  const bool even = (f & 1) == 0;  // then the interval is closed: ties parse to v
  auto high_reached = [&](const Big& rr) {  // rr + mp > s (>= when even), t as scratch
    big_add(t, rr, mm);
    if (lower_closer) big_add(t, t, mm);
    int c = big_cmp(t, s);
    return even ? c >= 0 : c > 0;
  };
  // k: the first digit has weight 10^(k-1). The estimate is never above the answer.
  int k = floor_log10_pow2(e + bit_length64(f) - 1) + 1;
  if (k >= 0) {
    for (int i = 0; i < k; ++i) big_mul_add(s, 10, 0);
  } else {
    for (int i = 0; i < -k; ++i) {
      big_mul_add(r, 10, 0);
      big_mul_add(mm, 10, 0);
    }
  }
  while (high_reached(r)) {
    big_mul_add(s, 10, 0);
    ++k;
  }
  *x10 = k - 1;
  int n = 0;
  for (;;) {
    big_mul_add(r, 10, 0);
    big_mul_add(mm, 10, 0);
    int digit = 0;
    while (big_cmp(r, s) >= 0) {
      big_sub(r, s);
      ++digit;
    }
    int c = big_cmp(r, mm);
    bool low = even ? c <= 0 : c < 0;  // the digits so far are within the lower gap
    bool high = high_reached(r);  // the next digit up is within the upper gap
    if (!low && !high && n < 16) {  // (17 digits always suffice: n < 16 only bounds d)
      d[n++] = static_cast<char>('0' + digit);
      continue;
    }
    if (low && high) {  // both round-trip: take the nearer (2r vs s), ties to even
      big_add(t, r, r);
      int half = big_cmp(t, s);
      if (half > 0 || (half == 0 && (digit & 1) != 0)) ++digit;
    } else if (high) {
      ++digit;
    }
    d[n++] = static_cast<char>('0' + digit);
    return n;
  }
}

// Python repr() layout of the digits d[0, n) with the first digit at 10^x.
size_t layout(bool neg, const char* d, int n, int x, char* buf) {
  char* p = buf;
  if (neg) *p++ = '-';
  if (x >= -4 && x < 16) {
    // One loop over the decimal places from the highest written (10^x, or the units
    // when x < 0) down to the lowest (the last digit, or the tenths): a zero where d has
    // no digit, the point after the units.
    int low = x - n + 1 < -1 ? x - n + 1 : -1;
    for (int pw = x > 0 ? x : 0; pw >= low; --pw) {
      int i = x - pw;
      *p++ = i >= 0 && i < n ? d[i] : '0';
      if (pw == 0) *p++ = '.';
    }
  } else {
    *p++ = d[0];
    if (n > 1) {
      *p++ = '.';
      for (int i = 1; i < n; ++i) *p++ = d[i];
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
    *p++ = static_cast<char>('0' + ax / 10 % 10);
    *p++ = static_cast<char>('0' + ax % 10);
  }
  *p = '\0';
  return static_cast<size_t>(p - buf);
}

// ---------------------------------------------------------------- parsing

constexpr int kMaxDigits = 800;  // significant digits kept exactly (see the top)
constexpr int kParseLimbs = 86;  // 2752 bits: D < 10^801 (2661 bits), 5^1124 * 2^63 (2673)

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The double nearest to dig * 10^e10 where dig is the decimal integer of the digit
// sequence `at(0..nd)`, nd <= kMaxDigits + 1, no leading zero.
template <typename DigitAt>
double exact_decimal(bool neg, DigitAt at, int nd, int e10) {
  uint32_t aw[kParseLimbs], bw[kParseLimbs];
  Big a{aw, kParseLimbs, 0}, b{bw, kParseLimbs, 0};
  big_set(a, 0);
  // One digit at a time (only the rare inexact texts come here: short code over speed).
  for (int i = 0; i < nd; ++i) big_mul_add(a, 10, static_cast<uint32_t>(at(i) - '0'));
  bool sticky = false;
  if (e10 >= 0) {  // a * 5^e10 * 2^e10, exactly; its top 64 bits and a sticky bit
    big_mul_pow5(a, e10);
    int bits = big_bits(a);
    int pos = bits > 64 ? bits - 64 : 0;
    uint64_t top = big_bits_at(a, pos, &sticky);  // (sets sticky: not in the call below)
    return make_double(neg, top, sticky, e10 + pos);
  }
  // a / 5^-e10 * 2^e10: scale so the quotient has 63 or 64 bits, then long division.
  big_set(b, 1);
  big_mul_pow5(b, -e10);
  int diff = big_bits(a) - big_bits(b);
  int sa = diff < 63 ? 63 - diff : 0;
  int sb = diff > 63 ? diff - 63 : 0;
  big_shl(a, sa);
  big_shl(b, sb + 63);
  // Restoring division with the remainder doubled each step instead of the divisor
  // halved: the remainder stays below 2b (one bit above b's size), and the doubling is
  // the multiply-add the digits already use.
  uint64_t q = 0;
  for (int i = 63; i >= 0; --i) {
    if (big_cmp(a, b) >= 0) {
      big_sub(a, b);
      q |= uint64_t{1} << i;
    }
    big_mul_add(a, 2, 0);
  }
  return make_double(neg, q, a.n != 0, e10 - sa + sb);
}

}  // namespace

size_t format_int64(int64_t v, char* buf) {
  char tmp[20];
  char* p = tmp + sizeof tmp;  // digits from the last one backwards
  // Work on the unsigned magnitude so INT64_MIN is fine.
  uint64_t u = v < 0 ? (~static_cast<uint64_t>(v) + 1) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + (u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  size_t len = static_cast<size_t>(tmp + sizeof tmp - p);
  memcpy(buf, p, len);
  buf[len] = '\0';
  return len;
}

size_t format_double(double v, char* buf) {
  uint64_t bits = bits_of(v);
  bool neg = (bits >> 63) != 0;
  int be = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  if (be == 0x7FF) {
    memcpy(buf, "null", 5);
    return 4;
  }
  char d[20];
  int n = 0;
  int x = 0;
  // An integer below 2^53 (the mantissa has no set bit below the binary point): its
  // digits without the trailing zeros are the shortest. Shifted one bit at a time: a
  // variable 64-bit shift is long code on a 32-bit MCU.
  uint64_t u = frac | (uint64_t{1} << 52);
  int point = 1075 - be;  // bits of u below the binary point
  if (be >= 1023) {
    while (point > 0 && (u & 1) == 0) {
      u >>= 1;
      --point;
    }
  }
  if (be == 0 && frac == 0) {
    d[n++] = '0';
  } else if (be >= 1023 && point == 0) {
    n = static_cast<int>(format_int64(static_cast<int64_t>(u), d));
    x = n - 1;
    while (d[n - 1] == '0') --n;
  } else if (be == 0) {
    n = shortest_digits(frac, -1074, false, d, &x);
  } else {
    n = shortest_digits(frac | (uint64_t{1} << 52), be - 1075, frac == 0 && be > 1, d, &x);
  }
  return layout(neg, d, n, x, buf);
}

bool parse_double(const char* text, size_t len, double* out) {
  *out = 0;
  const char* p = text;
  const char* const end = text + len;
  bool neg = false;
  if (p < end && *p == '-') {
    neg = true;
    ++p;
  }
  const char* const int0 = p;
  if (p >= end || !is_digit(*p)) return false;
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && is_digit(*p)) ++p;
  }
  const char* const int1 = p;
  const char* frac0 = p;
  const char* frac1 = p;
  if (p < end && *p == '.') {
    frac0 = ++p;
    while (p < end && is_digit(*p)) ++p;
    frac1 = p;
    if (frac1 == frac0) return false;
  }
  ptrdiff_t exp10 = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool eneg = false;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    const char* e0 = p;
    while (p < end && is_digit(*p)) {
      if (exp10 < 100000000) exp10 = exp10 * 10 + (*p - '0');  // saturates (fits 32 bits): 0 or inf anyway
      ++p;
    }
    if (p == e0) return false;
    if (eneg) exp10 = -exp10;
  }
  if (p != end) return false;

  // The digit sequence is int0..int1 followed by frac0..frac1.
  const ptrdiff_t n_int = int1 - int0;
  const ptrdiff_t n_all = n_int + (frac1 - frac0);
  auto at = [&](ptrdiff_t i) { return i < n_int ? int0[i] : frac0[i - n_int]; };
  ptrdiff_t first = 0;
  while (first < n_all && at(first) == '0') ++first;
  if (first == n_all) {
    *out = neg ? -0.0 : 0.0;
    return true;
  }
  ptrdiff_t last = n_all - 1;
  while (at(last) == '0') --last;
  // value = digits[first..last] * 10^e, leading digit at 10^lead
  const ptrdiff_t nsig = last - first + 1;
  const ptrdiff_t e = exp10 - (frac1 - frac0) + (n_all - 1 - last);
  const ptrdiff_t lead = nsig - 1 + e;
  if (lead > 308) {  // >= 1e309: beyond the largest double (1.797...e308)
    *out = double_of((neg ? uint64_t{1} << 63 : 0) | (uint64_t{0x7FF} << 52));
    return true;
  }
  if (lead < -324) {  // < 1e-324: below half the smallest subnormal (4.94e-324)
    *out = neg ? -0.0 : 0.0;
    return true;
  }
#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 1)
  if (nsig <= 19) {
    uint64_t w = 0;
    for (ptrdiff_t i = first; i <= last; ++i) w = w * 10 + static_cast<uint64_t>(at(i) - '0');
    // Both operands exact doubles, so one IEEE operation rounds correctly (anything
    // else, rare in practice, takes the exact path below).
    if (w <= (uint64_t{1} << 53) && e >= -22 && e <= 22) {
      // 10^|e| <= 1e22 is exact, and so is every power on the way there.
      double p10 = 1;
      for (ptrdiff_t k = e < 0 ? -e : e; k > 0; --k) p10 *= 10;
      double m = static_cast<double>(w);
      double r = e >= 0 ? m * p10 : m / p10;
      *out = neg ? -r : r;
      return true;
    }
  }
#endif
  // Exact path, at most kMaxDigits digits plus a sticky 1.
  auto digit = [&](ptrdiff_t i) { return i < kMaxDigits ? at(first + i) : '1'; };
  if (nsig <= kMaxDigits) {
    *out = exact_decimal(neg, digit, static_cast<int>(nsig), static_cast<int>(e));
  } else {
    *out = exact_decimal(neg, digit, kMaxDigits + 1, static_cast<int>(e + nsig - kMaxDigits - 1));
  }
  return true;
}

// ---------------------------------------------------------------- JsonWriter

JsonWriter::JsonWriter(char* buf, size_t cap) : buf_(buf), cap_(cap), len_(0), overflow_(false), need_comma_(false) {}

void JsonWriter::reset(char* buf, size_t cap) {
  buf_ = buf;
  cap_ = cap;
  len_ = 0;
  overflow_ = false;
  need_comma_ = false;
}

void JsonWriter::put(const char* s, size_t n) {
  if (overflow_) return;
  if (buf_ == nullptr) {  // measuring
    len_ += n;
    return;
  }
  if (n > cap_ - len_) {
    overflow_ = true;
    return;
  }
  memcpy(buf_ + len_, s, n);
  len_ += n;
}

void JsonWriter::comma() {
  if (need_comma_) put(",", 1);
  need_comma_ = false;
}

void JsonWriter::begin_object() {
  raw("{", 1);
  need_comma_ = false;
}

void JsonWriter::end_object() {
  put("}", 1);
  need_comma_ = true;
}

void JsonWriter::begin_array() {
  raw("[", 1);
  need_comma_ = false;
}

void JsonWriter::end_array() {
  put("]", 1);
  need_comma_ = true;
}

void JsonWriter::key(const char* k) {
  string(k);
  put(":", 1);
  need_comma_ = false;
}

void JsonWriter::string(const char* s) { string(s, s != nullptr ? strlen(s) : 0); }

namespace json {
namespace detail {
const char kHexDigits[17] = "0123456789abcdef";
}  // namespace detail
}  // namespace json

namespace {

inline bool plain_byte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// The end of the leading bytes of [p, end) that need neither an escape nor a UTF-8 check
// (printable ASCII but the quote and the backslash): whole words (the last one may
// overlap bytes already checked), then bytes within the word that is not plain.
const unsigned char* plain_end(const unsigned char* p, const unsigned char* end) {
  json::detail::Word x;
  constexpr ptrdiff_t kWord = sizeof x;
  if (end - p >= kWord) {
    const unsigned char* last = end - kWord;
    for (;;) {
      const unsigned char* at = p < last ? p : last;
      memcpy(&x, at, sizeof x);
      if (!json::detail::plain_word(x)) break;  // the byte to look at is in [p, at + kWord)
      if (at == last) return end;
      p += kWord;
    }
  } else if (sizeof x > 4 && end - p >= 4) {  // 4..7 bytes on a 64-bit host: two 4-byte looks
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, end - 4, 4);
    if (json::detail::plain_word(a) && json::detail::plain_word(b)) return end;
  }
  while (p < end && plain_byte(*p)) ++p;
  return p;
}

}  // namespace

void JsonWriter::string(const char* s, size_t len) {
  comma();
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  if (buf_ != nullptr && !overflow_ && len + 2 <= cap_ - len_ && plain_end(u, u + len) == u + len) {
    // The common case, nothing to escape: the quotes and the bytes in one step.
    char* o = buf_ + len_;
    o[0] = '"';
    memcpy(o + 1, s, len);
    o[len + 1] = '"';
    len_ += len + 2;
  } else {
    put("\"", 1);
    escaped(s, len);
    put("\"", 1);
  }
  need_comma_ = true;
}

void JsonWriter::escaped(const char* s, size_t len) {
  const char* const kHex = json::detail::kHexDigits;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  const unsigned char* end = p + len;
  const unsigned char* run = p;  // start of bytes that need no escaping
  while ((p = plain_end(p, end)) < end) {
    unsigned char c = *p;
    char ubuf[6];
    const char* esc = ubuf;
    size_t esc_len = 2;
    if (c == '"' || c == '\\') {
      // written as they are after the backslash (below)
    } else if (c < 0x20) {
      // \b \t \n \f \r by a table over 8..13 (\v, 11, has no short form), else \u00XX.
      if (c >= 8 && c <= 13 && c != 11) {
        c = static_cast<unsigned char>("btn_fr"[c - 8]);
      } else {
        memcpy(ubuf + 1, "u00", 3);
        ubuf[4] = kHex[c >> 4];
        ubuf[5] = kHex[c & 0xF];
        esc_len = 6;
      }
    } else if (c >= 0x80) {
      // Validate the UTF-8 sequence (the reader's check); a malformed byte becomes U+FFFD.
      size_t need = json::detail::utf8_seq(p, end);
      if (need != 0) {
        p += need;
        continue;
      }
      esc = "\xEF\xBF\xBD";
      esc_len = 3;
    } else {
      ++p;
      continue;
    }
    ubuf[0] = '\\';
    if (esc_len == 2) ubuf[1] = static_cast<char>(c);  // \" \\ and the short forms
    put(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    put(esc, esc_len);
    ++p;
    run = p;
  }
  put(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
}

// Scalars are pre-serialized values: one copy of the comma logic.
void JsonWriter::integer(int64_t v) {
  char buf[21];
  raw(buf, format_int64(v, buf));
}

void JsonWriter::number(double v) {
  char buf[32];
  raw(buf, format_double(v, buf));
}

void JsonWriter::boolean(bool v) { raw(v ? "true" : "false", v ? 4 : 5); }

void JsonWriter::null() { raw("null", 4); }

void JsonWriter::raw(const char* json, size_t len) {
  comma();
  put(json, len);
  need_comma_ = true;
}

void JsonWriter::raw_fragment(const char* text, size_t len) { put(text, len); }

}  // namespace mcpgen
