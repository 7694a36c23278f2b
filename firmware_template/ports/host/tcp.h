// Time and randomness for the host simulator's network modes (WebSocket on
// libwebsockets, MQTT on libmosquitto): a monotonic clock, poll() timeouts, sleeping
// between reconnects, and random bytes for UUIDs. POSIX, no heap.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hostport {

// Milliseconds of CLOCK_MONOTONIC.
int64_t now_ms();

// The poll() timeout until deadline_ms (a now_ms() value): -1 (forever) when the
// deadline is negative, 0 once it has passed.
int remaining_ms(int64_t deadline_ms);

// Sleeps ms milliseconds (resumed after signals).
void sleep_ms(int ms);

// Fills buf with n random bytes (/dev/urandom, falling back to a time-seeded PRNG).
void random_bytes(void* buf, size_t n);

}  // namespace hostport
