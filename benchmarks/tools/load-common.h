/*
 * load-common.h: what the CoAP load generators in this folder share: a monotonic clock in
 * microseconds, the Uri-Path options of a path (RFC 7252 section 3.1), and percentiles from a
 * histogram of latencies.
 */
#ifndef COAPNET_LOAD_COMMON_H
#define COAPNET_LOAD_COMMON_H

#include <stdint.h>
#include <string.h>
#include <time.h>

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + ts.tv_nsec / 1000u;
}

/* Uri-Path options (option 11, one per segment) for path; returns their length. */
static size_t path_options(uint8_t *buf, const char *path) {
  size_t n = 0;
  unsigned prev = 0;
  const char *p = path;
  while (*p == '/') p++;
  while (*p) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    unsigned delta = 11 - prev;
    prev = 11;
    if (len < 13) {
      buf[n++] = (uint8_t)(delta << 4 | len);
    } else {
      buf[n++] = (uint8_t)(delta << 4 | 13);
      buf[n++] = (uint8_t)(len - 13);
    }
    memcpy(buf + n, p, len);
    n += len;
    p += len;
    while (*p == '/') p++;
  }
  return n;
}

/* The upper edge of the bucket holding the given share (0..1) of the samples; buckets are width units wide. */
static uint64_t percentile(const uint64_t *hist, int buckets, uint64_t width, double share) {
  uint64_t total = 0, acc = 0;
  for (int b = 0; b < buckets; b++) total += hist[b];
  if (total == 0) return 0;
  for (int b = 0; b < buckets; b++) {
    acc += hist[b];
    if ((double)acc >= share * (double)total) return (uint64_t)(b + 1) * width;
  }
  return (uint64_t)buckets * width;
}

#endif
