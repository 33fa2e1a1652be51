/*
 * coap-fleet: a fleet of N secure CoAP devices on one host (issue 41): each device a UDP socket of its own on a source
 * address of its own share of 127.0.0.0/8 (the kernel routes all of it to loopback, so 100,000 sessions fit the port
 * space), with its own PSK identity and key (RFC 7252 section 9.1.3.1), a DTLS 1.2 session (OpenSSL), and a CON POST of
 * a small SenML-JSON reading (RFC 8428) to /fleet/{identity} every P seconds with jitter, retransmitted as RFC 7252
 * section 4.2 says. A reconnect storm (--storm-at) drops every session at a random point of a window and handshakes
 * again, as a fleet does when a cell comes back. OpenSSL 3.0 has no Connection ID (RFC 9146): sessions are found by
 * address, so CID is not measured here.
 *
 *   coap-fleet -K keys.txt [-h host] [-p port] [-n devices] [-d seconds] [-P period_s] [-j jitter] [-a in_flight]
 *              [-r handshakes_per_s] [--per-address M] [--first-address A] [--storm-at S] [--storm-window W]
 *              [--storm-same-port] [--put] [--status S] [--setup-timeout S] [--processes P] [--timeline FILE] [--slow-log PREFIX] [-C ciphers]
 *   coap-fleet --write-keys FILE N [--dashboards K] [--random-keys | --shared-key HEX]
 *
 *   -K           the key file (format below): the first N identities beginning "dev-" are the devices, in order
 *   -n           devices (default 1000); -d seconds of reporting once every device is up (default 120)
 *   -P, -j       a report every P seconds (default 60), each interval P * (1 + u), u uniform in [-j, j] (default 0.1);
 *                a device's first report falls uniformly within its first period, so the fleet's reports are spread
 *   -a, -r       handshakes: at most a in flight (default 64; at setup, in a storm and on retries alike: the
 *                generator's devices share a core, see begin_or_wait) and, with r, at most r begun a second at setup (fleet-wide:
 *                each worker process takes its share)
 *   --per-address  devices per source address (default 250: the ephemeral port range holds about 28,000 per address),
 *                  device i on address i mod (devices / M), so devices begun together come from different addresses
 *   --first-address  the first source address (default 127.1.0.1), then upwards
 *   --storm-at S   S seconds after every device is up, each device drops its session at a uniformly random point of
 *                  the next W seconds (--storm-window, default 60) without close_notify, as a device losing its cell
 *                  does, and handshakes again from a new port (the old session stays on the server until it times out,
 *                  as after a NAT rebinding; --storm-same-port keeps the port: RFC 6347 section 4.2.8's new handshake on
 *                  an existing association), then reports on its old schedule. The run lasts at least until every
 *                  device is back or W + 120 s have passed.
 *   --setup-timeout S  when not every device is up after S seconds (default 600), the run goes on with those that are
 *   --processes P  worker processes (default: as few as hold the devices, each at most the open-file limit less 64;
 *                  one when the limit allows, see below); worker k runs devices [k N / P, (k + 1) N / P)
 *   --timeline FILE  at the end, one line a second: responses, those slower than 5 and 10 ms at the device's socket,
 *                  the slowest (whether the slow ones come together, a stall, or spread out, queueing)
 *   --slow-log PREFIX  worker k writes PREFIX.k: a line for each response slower than 10 ms at the device's socket,
 *                  "sent_us send_us wire_us user_us device": the report's CLOCK_MONOTONIC time (the loop's clock when
 *                  it was due), how long its SSL_write and send took, the latency at the socket and in the worker, the
 *                  device's index (benchmarks/tools/fleet-bursts.py groups them and lines them up with a perf trace)
 *   --put        PUT instead of POST (libcoap's coap-server creates a resource on PUT with -d, and answers POST 4.05)
 *   --write-keys FILE N  writes N devices (dev-000001 ...) and K dashboards (--dashboards, dash-001 ...) to FILE and
 *                  exits; keys are the first 16 bytes of SHA-256("coapnet-fleet " identity), random with --random-keys,
 *                  or all the same with --shared-key (identities stay their own), for a server that takes one key for
 *                  every identity (libcoap's coap-server -k)
 *
 * The key file (read by the server too): UTF-8 text, one identity a line, "identity<SPACE>hexkey" with the 16-byte key in
 * lowercase hex; lines beginning with '#' are comments.
 *
 * A report is a CON POST with a 4-byte token, Uri-Path "fleet" and the identity, Content-Format 110
 * (application/senml+json) and [{"bn":"<identity>/","n":"temperature","u":"Cel","v":21.37,"t":<send time>}] where
 * the time is Unix seconds with milliseconds, the moment the report was first sent, so an observer of the resource can
 * compute its notification lag. Unanswered, it goes again after ACK_TIMEOUT (2 s) times a random factor up to
 * ACK_RANDOM_FACTOR (1.5), doubling, at most MAX_RETRANSMIT (4) times (RFC 7252 section 4.2); after that the report has
 * timed out and the device, taking its session for lost, handshakes again. An empty ACK stops the retransmissions and
 * the response then comes as a CON, which is acknowledged (section 5.2.2). One report outstanding per device (NSTART 1,
 * section 4.7): one that falls due while the last is unanswered is skipped. Latency: from the first transmission to the
 * response, as this process reads it (p50_us...), and to the response's arrival at the device's socket, the kernel's
 * receive timestamp (SIOCGSTAMPNS; wire_p50_us...): the devices share one core in a few processes, and the time one
 * waits for it while its response sits in the socket is the generator's, not the server's. A failed or timed-out handshake (30 s) is tried again after 1 to 5 s.
 *
 * Output, key=value lines:
 *   status t_s=... up=... handshaking=... hs_ok=... hs_failed=... sent=... ok=... bad=... timeouts=... retransmits=...
 *          skipped=... lost=... iv_ok=... p50_us=... p99_us=... p999_us=... cpu_s=... rss_kb=... wire_p50_us=...
 *          wire_p99_us=... wire_p999_us=...   every --status seconds (default 10): counts since the start, iv_ok and
 *          the percentiles over the interval
 *   setup devices=... up=... failed=... seconds=... hps=... ok=... rss_kb=... rss_per_device_b=...   once every device is up:
 *          rss_per_device_b is (VmRSS now - VmRSS before the first socket) / devices: sockets, SSL objects, state
 *   storm devices=... back=... all_back_s=... back_p50_s=... back_p99_s=... reconnect_p50_ms=... reconnect_p99_ms=...
 *          hs_peak_per_s=... hs_mean_per_s=...   and   storm_hps=n0,n1,...   (handshakes completed in each second
 *          from the storm's start), when every device is back or the storm's time is up
 *   summary devices=... up=... seconds=... sent=... ok=... bad=... timeouts=... retransmits=... skipped=... lost=...
 *          reports_per_s=... p50_us=... p99_us=... p999_us=... max_us=... hs_ok=... hs_failed=... cpu_s=...
 *          cpu_us_per_report=... rss_kb=... rss_per_device_b=... wire_p50_us=... wire_p99_us=... wire_p999_us=...
 *          wire_max_us=...   at the end (the percentiles over the reporting phase)
 * The lines are the whole fleet's, whatever P: the workers keep their counters and histograms in shared memory, each its
 * own, and the parent sums the counters and merges the histograms (the same buckets) before it takes a percentile; cpu_s
 * is the workers' CPU time and the parent's, rss_kb the workers' VmRSS summed (each counts the libraries it maps),
 * rss_per_device_b the workers' growth from their start over N. The parent decides the phases for every worker: when the
 * last device of the fleet is up the reporting phase begins, and the storm is one storm at one time for all of them.
 *
 * Why processes: a socket per device, and a process may hold only so many open files. The limit is raised to N + 64
 * as far as it goes (past the hard limit when it may: root with CAP_SYS_RESOURCE, up to /proc/sys/fs/nr_open), and the
 * fleet is split over as many workers as the raised limit requires (they inherit it); the benchmark
 * machine's container has no CAP_SYS_RESOURCE and a hard limit of 20,000, so one process holds 19,936 devices there and
 * 100,000 take 6 workers. Device i's source address depends on i alone (so not on P), and the kernel gives every socket
 * a port free on its address whichever process asks. A worker that fails ends the run (the others are killed, exit
 * status 2); the workers die with the parent (PR_SET_PDEATHSIG), and SIGINT or SIGTERM to the parent stops them all
 * and still prints the summary.
 * Exit status 0 when every device came up and at least one report was answered, 1 otherwise, 2 on a usage or setup error
 * or when a worker failed.
 *
 * Build: cc -O2 -Wall -Wextra -o coap-fleet coap-fleet.c -lssl -lcrypto   (Linux: epoll; Debian: libssl-dev)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "dtls-common.h"
#include "load-common.h"

#define MAX_DEVICES 1000000
#define MAX_PROCESSES 256
#define ID_MAX 16 /* identities up to 15 bytes: dev-000001 ... dev-999999 are 10 */
#define KEY_LEN 16

/* RFC 7252 section 4.8: ACK_TIMEOUT 2 s, ACK_RANDOM_FACTOR 1.5, MAX_RETRANSMIT 4. */
#define ACK_TIMEOUT_MS 2000
#define MAX_RETRANSMIT 4
#define HANDSHAKE_TIMEOUT_US 30000000u

/* A hashed timer wheel: one deadline per device, 10 ms slots, 16,384 of them (164 s a turn, more than a period plus its
 * jitter); a deadline further out waits a turn. Scanning 100,000 devices every tick would cost more than the fleet. */
#define TICK_US 10000u
#define WHEEL_SLOTS 16384

enum { WAITING, HANDSHAKING, UP, DOWN };

typedef struct {
  SSL *ssl;
  int fd;
  uint8_t state, retransmits, storm_pending;
  uint16_t mid;
  uint32_t token, timeout_ms, address;
  uint64_t due;          /* the timer wheel's deadline for this device, 0 = none */
  int32_t wnext, wprev, wslot;
  uint64_t started;      /* when its handshake began */
  uint64_t next_report;  /* when its next report is due */
  uint64_t sent_at;      /* the outstanding report's first transmission, 0 = none */
  uint64_t retransmit_at;
  uint64_t sent_unix_ms; /* the outstanding report's time, in its payload */
  uint64_t sent_wire_ns; /* CLOCK_REALTIME just before its first transmission, against the kernel's arrival stamp */
  uint32_t send_us;      /* how long that transmission took (SSL_write and sendto), for --slow-log */
  uint64_t storm_at;     /* when it drops its session in the storm, 0 = not scheduled */
  uint64_t dropped_at;   /* when it dropped it, until it is back */
  uint64_t retry_at;     /* DOWN: when it handshakes again */
  char id[ID_MAX];
  uint8_t key[KEY_LEN];
} device_t;

/* Latencies in a log-linear histogram: exact below 1,024 us, then 512 buckets per power of two (0.2% wide). */
#define HBUCKETS (1024 + 40 * 512)
typedef struct { uint32_t n[HBUCKETS]; uint64_t count, max; } hist_t;

static int bucket_of(uint64_t v) {
  if (v < 1024) return (int)v;
  int e = 63 - __builtin_clzll(v) - 9;
  int b = 1024 + (e - 1) * 512 + (int)((v >> e) - 512);
  return b < HBUCKETS ? b : HBUCKETS - 1;
}

static uint64_t bucket_top(int b) {
  if (b < 1024) return (uint64_t)b + 1;
  int e = (b - 1024) / 512 + 1;
  return ((uint64_t)((b - 1024) % 512 + 512) + 1) << e;
}

/* The statistics live in memory shared with the parent, which reads them while the worker writes: each counter has one
 * writer, so a relaxed atomic store of its value plus one (no locked instruction) and the parent's atomic loads suffice. */
#define BUMP(x) __atomic_store_n(&(x), (x) + 1, __ATOMIC_RELAXED)
#define PUT(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void hist_add(hist_t *h, uint64_t v) {
  BUMP(h->n[bucket_of(v)]);
  BUMP(h->count);
  if (v > h->max) PUT(h->max, v);
}

/* The upper edge of the bucket holding the given share of the samples (0 for none). */
static uint64_t hist_at(const hist_t *h, double share) {
  if (h->count == 0) return 0;
  uint64_t acc = 0;
  for (int b = 0; b < HBUCKETS; b++) {
    acc += h->n[b];
    if ((double)acc >= share * (double)h->count) return bucket_top(b);
  }
  return h->max;
}

#define TIMELINE_S 4096 /* seconds the --timeline covers, a little over an hour */

/* One worker's statistics, in shared memory, written by that worker only: counts since the start, a histogram of every
 * response's latency since the start (the parent takes an interval's as the difference from its last reading), the
 * reporting phase's, the storm's, and the handshakes completed in each second of the storm. The parent sums and merges
 * them: percentiles come from the merged histogram, never from the workers' percentiles. */
typedef struct {
  uint64_t hs_ok, hs_failed, sent, ok, bad, timeouts, retransmits, skipped, lost, back;
  uint64_t up, handshaking;          /* sessions up and handshakes in progress now */
  uint64_t cpu_us, rss_kb, rss0_kb;  /* published on the parent's request: getrusage(RUSAGE_SELF), VmRSS, VmRSS at start */
  uint64_t ack;                      /* the last request published */
  uint64_t done;                     /* stopped: its final statistics are published, it tears down and exits */
  hist_t all, run, storm_back, storm_reconnect;
  hist_t wire_all, wire_run;         /* the same latencies to the response's arrival at the device's socket */
  /* By second since the start (--timeline): responses, those slower than 5 and 10 ms at the device's socket, the slowest;
   * whether the slow ones come together (a stall of the server) or spread out (queueing) */
  uint32_t tl_n[TIMELINE_S], tl_5ms[TIMELINE_S], tl_10ms[TIMELINE_S], tl_max_us[TIMELINE_S];
  uint32_t storm_hps[];              /* storm_hps_len seconds */
} worker_t;

/* What the parent tells the workers; CLOCK_MONOTONIC times in microseconds, the same clock in every process. */
typedef struct {
  uint64_t t0;           /* the start, for the pacing of the setup */
  uint64_t report_start; /* every device is up (or the setup timed out): reports count into the run's histogram */
  uint64_t storm_start;  /* the fleet-wide storm's start (known from report_start on) */
  uint64_t storm_over;   /* the storm is reported: its handshakes no longer count into storm_hps */
  uint64_t publish;      /* a request to publish CPU time and RSS, answered in worker_t.ack */
  uint64_t stop;
} control_t;

static device_t *dev;
static int n_devices = 1000, in_flight_max = 64, per_address = 250, use_put = 0, same_port = 0;
static double period_s = 60, jitter = 0.1, hs_rate = 0;
static struct sockaddr_in server;
static uint32_t first_address, addresses;
static SSL_CTX *ctx;
static int ep;
static int32_t wheel[WHEEL_SLOTS];
static uint64_t wheel_tick; /* the next tick to process */
static int storm_window_s = 60, storm_hps_len;
static control_t *ctl;
static unsigned char *workers_mem;
static size_t worker_stride;
static int processes;
/* A worker's own: its devices dev[0 .. count) are the fleet's base .. base + count - 1. */
static worker_t *me;
static const char *slow_log_prefix; /* --slow-log */
static FILE *slow_log;
static int count, base, in_flight, up_count, handshaking;
static int measuring;      /* reports answered count into the run's histogram once every device of the fleet was up */
static int storm_counting; /* handshakes completed count into storm_hps, from the storm's start until it is reported */
static uint64_t storm_start;
static volatile sig_atomic_t stopping;

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static void die(const char *what) {
  fprintf(stderr, "coap-fleet: %s: %s\n", what, strerror(errno));
  ERR_print_errors_fp(stderr);
  exit(2);
}

static double uniform(void) { return (double)rand() / ((double)RAND_MAX + 1.0); }

static uint64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t unix_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

/* ---- the timer wheel ------------------------------------------------------------------------------------------ */

static void wheel_unlink(int i) {
  device_t *d = &dev[i];
  if (d->wslot < 0) return;
  if (d->wprev >= 0) dev[d->wprev].wnext = d->wnext;
  else wheel[d->wslot] = d->wnext;
  if (d->wnext >= 0) dev[d->wnext].wprev = d->wprev;
  d->wslot = d->wnext = d->wprev = -1;
}

/* Sets device i's deadline; never earlier than the next tick, so a deadline met while its slot is processed waits. */
static void wheel_set(int i, uint64_t due) {
  wheel_unlink(i);
  dev[i].due = due;
  if (due == 0) return;
  uint64_t tick = due / TICK_US;
  if (tick < wheel_tick) tick = wheel_tick;
  int slot = (int)(tick % WHEEL_SLOTS);
  dev[i].wslot = slot;
  dev[i].wprev = -1;
  dev[i].wnext = wheel[slot];
  if (wheel[slot] >= 0) dev[wheel[slot]].wprev = i;
  wheel[slot] = i;
}

/* The earliest thing device i has to do: a handshake retransmission or give-up, a report or its retransmission, its
 * drop in the storm, or its next handshake after a failure. */
static void reschedule(int i, uint64_t now) {
  device_t *d = &dev[i];
  uint64_t due = 0;
#define EARLIER(t) do { if ((t) && (due == 0 || (t) < due)) due = (t); } while (0)
  if (d->state == HANDSHAKING) {
    struct timeval tv;
    uint64_t giveup = d->started + HANDSHAKE_TIMEOUT_US;
    EARLIER(giveup);
    if (DTLSv1_get_timeout(d->ssl, &tv)) EARLIER(now + (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec);
  } else if (d->state == UP) {
    EARLIER(d->next_report);
    if (d->sent_at) EARLIER(d->retransmit_at);
  } else if (d->state == DOWN) {
    EARLIER(d->retry_at);
  }
  EARLIER(d->storm_at);
#undef EARLIER
  wheel_set(i, due);
}

/* ---- sessions ------------------------------------------------------------------------------------------------- */

static unsigned psk_client(SSL *ssl, const char *hint, char *id, unsigned max_id, unsigned char *psk, unsigned max_psk) {
  (void)hint;
  device_t *d = SSL_get_app_data(ssl);
  if (strlen(d->id) + 1 > max_id || KEY_LEN > max_psk) return 0;
  strcpy(id, d->id);
  memcpy(psk, d->key, KEY_LEN);
  return KEY_LEN;
}

static int open_socket(int i) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket (is the open-file limit too low?)");
  struct sockaddr_in from = {0};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(dev[i].address);
  if (bind(fd, (struct sockaddr *)&from, sizeof from) < 0) die("bind to a source address of 127.0.0.0/8");
  if (connect(fd, (struct sockaddr *)&server, sizeof server) < 0) die("connect");
  /* The first SIOCGSTAMPNS turns on the kernel's receive timestamps for the socket (it answers ENOENT, nothing read
   * yet); after it, each one gives the arrival of the datagram read last. */
  struct timespec stamp;
  (void)ioctl(fd, SIOCGSTAMPNS, &stamp);
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
  return fd;
}

static void handshake_done(int i, uint64_t now);
static void retry_later(int i, uint64_t now);

/* Moves device i's handshake on with what has arrived: up, failed (tried again later), or waiting for more. */
static void drive_handshake(int i, uint64_t now) {
  int r = SSL_do_handshake(dev[i].ssl);
  if (r == 1) {
    handshake_done(i, now);
  } else if (SSL_get_error(dev[i].ssl, r) != SSL_ERROR_WANT_READ) {
    BUMP(me->hs_failed);
    retry_later(i, now);
  } else {
    reschedule(i, now);
  }
}

/* Starts device i's handshake (its ClientHello goes now; the rest as the server's flights arrive). */
static void begin(int i, uint64_t now) {
  device_t *d = &dev[i];
  if (d->fd < 0) d->fd = open_socket(i);
  BIO *bio = BIO_new_dgram(d->fd, BIO_NOCLOSE);
  BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, &server);
  d->ssl = SSL_new(ctx);
  if (!bio || !d->ssl) die("SSL_new");
  SSL_set_app_data(d->ssl, d);
  SSL_set_bio(d->ssl, bio, bio);
  SSL_set_connect_state(d->ssl);
  d->state = HANDSHAKING;
  d->started = now;
  in_flight++, handshaking++;
  /* The ClientHello; on loopback the server's answers may already be there, so the handshake can end in this call. */
  drive_handshake(i, now);
}

/*
 * Device i handshakes now, or, when -a handshakes of this process are in flight, waits a little (10 to 30 ms) for a
 * place: at setup, in a storm and on a retry alike. Each real device has a CPU of its own; these share one core, and a
 * core that takes on tens of thousands of handshakes at once answers none of the server's flights in time (measured:
 * 60,000 at once, and the server, seeing no progress for a second, gave each place to a newcomer, so none completed).
 */
static void begin_or_wait(int i, uint64_t now) {
  if (in_flight < in_flight_max) {
    begin(i, now);
    return;
  }
  dev[i].retry_at = now + 10000u + (uint64_t)(uniform() * 20000.0);
  reschedule(i, now);
}

/* Forgets device i's session: with close_notify (RFC 5246 section 7.2.1) at the end of the run, silently when it
 * loses it; its socket goes too unless keep_socket. */
static void teardown(int i, int notify, int keep_socket) {
  device_t *d = &dev[i];
  if (d->state == HANDSHAKING) in_flight--, handshaking--;
  if (d->state == UP) up_count--;
  if (d->ssl) {
    if (notify && d->state == UP) SSL_shutdown(d->ssl);
    SSL_free(d->ssl);
    d->ssl = NULL;
  }
  if (d->fd >= 0 && !keep_socket) {
    epoll_ctl(ep, EPOLL_CTL_DEL, d->fd, NULL);
    close(d->fd);
    d->fd = -1;
  }
  d->sent_at = 0;
  d->state = DOWN;
  ERR_clear_error();
}

/* Device i lost its session or could not make one: it handshakes again after 1 to 5 s, from a new port. */
static void retry_later(int i, uint64_t now) {
  teardown(i, 0, 0);
  dev[i].retry_at = now + 1000000u + (uint64_t)(uniform() * 4e6);
  reschedule(i, now);
}

static void handshake_done(int i, uint64_t now) {
  device_t *d = &dev[i];
  in_flight--, handshaking--;
  d->state = UP;
  up_count++;
  BUMP(me->hs_ok);
  if (storm_counting) {
    int s = (int)((now - storm_start) / 1000000u);
    if (s >= 0 && s < storm_hps_len) BUMP(me->storm_hps[s]);
  }
  if (d->dropped_at) {
    hist_add(&me->storm_back, now - storm_start);
    hist_add(&me->storm_reconnect, now - d->dropped_at);
    d->dropped_at = 0;
    BUMP(me->back);
  }
  /* The first report uniformly within the first period; after a reconnect, on the old schedule (at once if missed). */
  if (d->next_report == 0) d->next_report = now + (uint64_t)(uniform() * period_s * 1e6) + 1;
  else if (d->next_report < now) d->next_report = now;
  reschedule(i, now);
}

/* ---- reports -------------------------------------------------------------------------------------------------- */

static void transmit(int i) {
  device_t *d = &dev[i];
  uint8_t msg[256];
  size_t n = 0;
  msg[n++] = 0x44; /* version 1, CON, token length 4 */
  msg[n++] = use_put ? 0x03 : 0x02;
  msg[n++] = (uint8_t)(d->mid >> 8);
  msg[n++] = (uint8_t)d->mid;
  memcpy(msg + n, &d->token, 4);
  n += 4;
  char path[8 + ID_MAX];
  snprintf(path, sizeof path, "fleet/%s", d->id);
  n += path_options(msg + n, path);
  msg[n++] = 0x11; /* Content-Format (12), one byte after Uri-Path (11) */
  msg[n++] = 110;  /* application/senml+json, RFC 8428 section 12.3 */
  msg[n++] = 0xFF;
  /* A reading that changes with the time (so observers see changes), and the first transmission's time. */
  double v = 20 + (double)((d->sent_unix_ms / 1000 + (uint64_t)d->address) % 1000) / 100.0;
  n += (size_t)snprintf((char *)msg + n, sizeof msg - n, "[{\"bn\":\"%s/\",\"n\":\"temperature\",\"u\":\"Cel\",\"v\":%.2f,\"t\":%llu.%03llu}]",
                        d->id, v, (unsigned long long)(d->sent_unix_ms / 1000), (unsigned long long)(d->sent_unix_ms % 1000));
  /* A full socket buffer loses it, as a lossy link would: the retransmission covers it. */
  SSL_write(d->ssl, msg, (int)n);
}

static void next_report_after(device_t *d, uint64_t now) {
  d->next_report = now + (uint64_t)(period_s * 1e6 * (1 + jitter * (2 * uniform() - 1)));
}

static void send_report(int i, uint64_t now) {
  device_t *d = &dev[i];
  next_report_after(d, now);
  if (d->sent_at) { /* NSTART 1 (RFC 7252 section 4.7): the last one is still unanswered */
    BUMP(me->skipped);
    return;
  }
  d->mid++;
  d->token++;
  d->sent_at = now;
  d->sent_unix_ms = unix_ms();
  d->sent_wire_ns = realtime_ns();
  d->retransmits = 0;
  /* RFC 7252 section 4.2: the first timeout is random between ACK_TIMEOUT and ACK_TIMEOUT * ACK_RANDOM_FACTOR. */
  d->timeout_ms = ACK_TIMEOUT_MS + (uint32_t)(uniform() * ACK_TIMEOUT_MS / 2);
  d->retransmit_at = now + (uint64_t)d->timeout_ms * 1000u;
  BUMP(me->sent);
  transmit(i);
  d->send_us = (uint32_t)(now_us() - now);
}

/* A record from device i's session: the report's piggybacked response, an empty ACK, or a separate response (CON or NON). */
static void on_message(int i, const uint8_t *buf, int got, uint64_t now, uint64_t arrived_ns) {
  device_t *d = &dev[i];
  if (got < 4 || (buf[0] >> 6) != 1) return;
  int type = (buf[0] >> 4) & 3, tkl = buf[0] & 0x0f, code = buf[1];
  uint16_t mid = (uint16_t)(buf[2] << 8 | buf[3]);
  if (type == 0) { /* a CON (a separate response): acknowledge it, RFC 7252 section 5.2.2 */
    uint8_t ack[4] = {0x60, 0x00, buf[2], buf[3]};
    SSL_write(d->ssl, ack, sizeof ack);
  }
  if (!d->sent_at) return;
  if (type == 3 && mid == d->mid) { /* RST: the server will not take it */
    BUMP(me->bad);
    d->sent_at = 0;
    return;
  }
  if (code == 0) {
    if (type == 2 && mid == d->mid) { /* an empty ACK: the response comes separately; stop retransmitting (5.2.2) */
      d->retransmits = MAX_RETRANSMIT;
      d->retransmit_at = now + 60000000u;
    }
    return;
  }
  if (tkl != 4 || got < 8 || memcmp(buf + 4, &d->token, 4) != 0) return;
  uint64_t lat = now - d->sent_at;
  hist_add(&me->all, lat);
  if (measuring) hist_add(&me->run, lat);
  if (arrived_ns > d->sent_wire_ns) {
    uint64_t wire = (arrived_ns - d->sent_wire_ns) / 1000u;
    if (slow_log && wire > 10000)
      fprintf(slow_log, "%llu %u %llu %llu %d\n", (unsigned long long)d->sent_at, d->send_us, (unsigned long long)wire, (unsigned long long)lat, i);
    hist_add(&me->wire_all, wire);
    if (measuring) hist_add(&me->wire_run, wire);
    uint64_t second = (now - ctl->t0) / 1000000u;
    if (second < TIMELINE_S) {
      me->tl_n[second]++;
      if (wire > 5000) me->tl_5ms[second]++;
      if (wire > 10000) me->tl_10ms[second]++;
      if (wire > me->tl_max_us[second]) me->tl_max_us[second] = (uint32_t)(wire > UINT32_MAX ? UINT32_MAX : wire);
    }
  }
  if ((code >> 5) == 2) BUMP(me->ok);
  else BUMP(me->bad);
  d->sent_at = 0;
}

/* ---- the timer ------------------------------------------------------------------------------------------------ */

static void fire(int i, uint64_t now) {
  device_t *d = &dev[i];
  if (d->storm_at && d->storm_at <= now) {
    /* The storm reaches this device: its session is gone, without a word to the server. */
    d->storm_at = 0;
    teardown(i, 0, same_port);
    d->dropped_at = now;
    begin_or_wait(i, now);
    return;
  }
  switch (d->state) {
  case HANDSHAKING:
    if (now - d->started >= HANDSHAKE_TIMEOUT_US) {
      BUMP(me->hs_failed);
      retry_later(i, now);
      return;
    }
    /* RFC 6347 section 4.2.4: a flight not answered is sent again on the timer OpenSSL keeps. */
    DTLSv1_handle_timeout(d->ssl);
    break;
  case UP:
    if (d->sent_at && now >= d->retransmit_at) {
      if (d->retransmits < MAX_RETRANSMIT) {
        d->retransmits++;
        d->timeout_ms *= 2;
        d->retransmit_at = now + (uint64_t)d->timeout_ms * 1000u;
        BUMP(me->retransmits);
        transmit(i);
      } else {
        /* Given up (RFC 7252 section 4.2): the session is taken for lost and made again. */
        BUMP(me->timeouts);
        BUMP(me->lost);
        retry_later(i, now);
        return;
      }
    }
    if (now >= d->next_report) send_report(i, now);
    break;
  case DOWN:
    if (now >= d->retry_at) {
      begin_or_wait(i, now);
      return;
    }
    break;
  default:
    break;
  }
  reschedule(i, now);
}

static void run_wheel(uint64_t now) {
  uint64_t last = now / TICK_US;
  while (wheel_tick <= last) {
    /* wheel_tick moves on first, so what is scheduled while this slot is processed goes to a later tick. */
    int slot = (int)(wheel_tick++ % WHEEL_SLOTS);
    int32_t i = wheel[slot];
    wheel[slot] = -1;
    while (i >= 0) {
      int32_t next = dev[i].wnext;
      dev[i].wslot = dev[i].wnext = dev[i].wprev = -1;
      if (dev[i].due <= now) fire(i, now);
      else wheel_set(i, dev[i].due); /* a later turn */
      i = next;
    }
  }
}

static void on_readable(int i, uint64_t now) {
  device_t *d = &dev[i];
  if (d->state == HANDSHAKING) {
    drive_handshake(i, now);
    return;
  }
  if (d->state != UP) {
    /* A datagram for a session that is gone (the storm kept the socket): drop it. */
    uint8_t sink[16];
    while (recv(d->fd, sink, sizeof sink, 0) > 0) {}
    return;
  }
  uint8_t buf[2048];
  for (;;) {
    int got = SSL_read(d->ssl, buf, sizeof buf);
    if (got <= 0) {
      int err = SSL_get_error(d->ssl, got);
      if (err != SSL_ERROR_WANT_READ) { /* the server closed or broke the session */
        BUMP(me->lost);
        retry_later(i, now);
        return;
      }
      break;
    }
    /* When the datagram reached the socket, so that the time this process waited for its core is not the server's. */
    struct timespec stamp;
    uint64_t arrived_ns = ioctl(d->fd, SIOCGSTAMPNS, &stamp) == 0 ? (uint64_t)stamp.tv_sec * 1000000000u + (uint64_t)stamp.tv_nsec : 0;
    on_message(i, buf, got, now, arrived_ns);
  }
  reschedule(i, now);
}

/* ---- the key file --------------------------------------------------------------------------------------------- */

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

static int parse_hex(const char *s, uint8_t *out, size_t len) {
  if (strlen(s) != 2 * len) return 0;
  for (size_t j = 0; j < len; j++) {
    int hi = hexval(s[2 * j]), lo = hexval(s[2 * j + 1]);
    if (hi < 0 || lo < 0) return 0;
    out[j] = (uint8_t)(hi << 4 | lo);
  }
  return 1;
}

/* Reads the first n identities beginning "dev-" in path, with their keys, and keeps devices lo .. hi - 1 of them in dev
 * (none with dev NULL: the parent reads the file to say what is wrong with it before any worker starts); exits with 2
 * naming the line that is wrong. */
static void read_keys(const char *path, int n, int lo, int hi) {
  FILE *f = fopen(path, "r");
  if (!f) die(path);
  char line[512];
  int found = 0, number = 0;
  while (found < n && fgets(line, sizeof line, f)) {
    number++;
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#' || line[0] == 0) continue;
    char *space = strchr(line, ' ');
    uint8_t key[KEY_LEN];
    if (!space || space == line || (size_t)(space - line) >= ID_MAX || !parse_hex(space + 1, key, KEY_LEN)) {
      fprintf(stderr, "coap-fleet: %s line %d is not \"identity hexkey\" (an identity under %d bytes, a %d-byte key in hex)\n", path, number, ID_MAX,
              KEY_LEN);
      exit(2);
    }
    *space = 0;
    if (strncmp(line, "dev-", 4) != 0) continue;
    if (dev && found >= lo && found < hi) {
      strcpy(dev[found - lo].id, line);
      memcpy(dev[found - lo].key, key, KEY_LEN);
    }
    found++;
  }
  fclose(f);
  if (found < n) {
    fprintf(stderr, "coap-fleet: %s holds %d devices (dev-...), not %d\n", path, found, n);
    exit(2);
  }
}

static void derive_key(const char *identity, uint8_t *key) {
  char label[64];
  uint8_t digest[32];
  unsigned len = 0;
  int n = snprintf(label, sizeof label, "coapnet-fleet %s", identity);
  if (!EVP_Digest(label, (size_t)n, digest, &len, EVP_sha256(), NULL)) die("SHA-256");
  memcpy(key, digest, KEY_LEN);
}

static int write_keys(const char *path, int n, int dashboards, int random_keys, const uint8_t *shared) {
  FILE *f = fopen(path, "w");
  if (!f) die(path);
  fprintf(f, "# coap-fleet key file: identity and 16-byte PSK in hex, one a line (%d devices, %d dashboards, %s keys)\n", n, dashboards,
          shared ? "one shared" : random_keys ? "random" : "derived");
  for (int k = 0; k < n + dashboards; k++) {
    char id[ID_MAX + 8];
    uint8_t key[KEY_LEN];
    if (k < n) snprintf(id, sizeof id, "dev-%06d", k + 1);
    else snprintf(id, sizeof id, "dash-%03d", k - n + 1);
    if (shared) {
      memcpy(key, shared, KEY_LEN);
    } else if (random_keys) {
      if (RAND_bytes(key, KEY_LEN) != 1) die("RAND_bytes");
    } else {
      derive_key(id, key);
    }
    fprintf(f, "%s ", id);
    for (int j = 0; j < KEY_LEN; j++) fprintf(f, "%02x", key[j]);
    fputc('\n', f);
  }
  if (fclose(f) != 0) die(path);
  return 0;
}

/* ---- a worker: devices base .. base + count - 1 of the fleet, in a process of its own ---------------------------- */

static worker_t *worker(int k) { return (worker_t *)(workers_mem + (size_t)k * worker_stride); }

static void publish_usage(void) {
  PUT(me->cpu_us, (uint64_t)(cpu_seconds() * 1e6));
  PUT(me->rss_kb, (uint64_t)rss_kb());
  PUT(me->up, (uint64_t)up_count);
  PUT(me->handshaking, (uint64_t)handshaking);
}

/* Worker k's life: its devices' setup at its share of the pacing, their reports, the storm when the parent says it
 * begins, until the parent says stop (or a signal does); returns its exit status. */
static int run_worker(int k, const char *keys, int lo, int hi, int k_in_flight, double k_rate) {
  me = worker(k);
  if (slow_log_prefix) {
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", slow_log_prefix, k);
    if (!(slow_log = fopen(name, "w"))) die("--slow-log");
    setvbuf(slow_log, NULL, _IOLBF, 0); /* a line each, so what a worker stopped by a signal wrote is there */
  }
  memset(me, 0, worker_stride); /* its statistics' pages resident now, so they are not counted as the devices' memory */
  count = hi - lo, base = lo, in_flight_max = k_in_flight, hs_rate = k_rate;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  srand((unsigned)now_us() ^ (unsigned)getpid() * 2654435761u);

  /* Everything from here on is the devices': the memory per device is the growth from this reading. */
  PUT(me->rss0_kb, (uint64_t)rss_kb());
  dev = calloc((size_t)count, sizeof *dev);
  if (!dev) die("calloc");
  read_keys(keys, n_devices, lo, hi);
  for (int i = 0; i < count; i++) {
    device_t *d = &dev[i];
    d->fd = -1;
    d->wslot = d->wnext = d->wprev = -1;
    /* Round robin over the addresses by the device's place in the whole fleet, so its address does not depend on how
     * the fleet is split, and the devices that handshake together come from different ones (a server bounds the
     * handshakes in progress per source address; CoapNet's default is 16). The kernel gives each socket a port free on
     * its address, whichever process asks: no two devices share an address and port. */
    d->address = first_address + (uint32_t)(base + i) % addresses;
    d->mid = (uint16_t)rand();
    d->token = (uint32_t)rand();
  }
  for (int s = 0; s < WHEEL_SLOTS; s++) wheel[s] = -1;
  ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");

  struct epoll_event events[1024];
  uint64_t t0 = ctl->t0;
  int next_start = 0, stormed = 0;
  wheel_tick = now_us() / TICK_US;
  while (!stopping && !GET(ctl->stop)) {
    uint64_t now = now_us();
    /* Setup: at most this worker's share of -a handshakes in flight, and of -r begun a second. */
    while (next_start < count && in_flight < in_flight_max && (hs_rate == 0 || (double)next_start < hs_rate * (double)(now - t0) / 1e6))
      begin(next_start++, now);
    int n = epoll_wait(ep, events, 1024, (int)(TICK_US / 1000));
    if (n < 0 && errno != EINTR) die("epoll_wait");
    now = now_us();
    for (int e = 0; e < n; e++) on_readable((int)events[e].data.u32, now);
    run_wheel(now);

    uint64_t report_start = GET(ctl->report_start), storm_at = GET(ctl->storm_start);
    measuring = report_start && now >= report_start;
    if (!stormed && storm_at && now >= storm_at) {
      /* The fleet-wide storm: every device drops its session at a uniformly random point of the window that began
       * at the time the parent set, the same in every worker. */
      stormed = storm_counting = 1;
      storm_start = storm_at;
      for (int i = 0; i < count; i++) {
        dev[i].storm_at = storm_at + 1 + (uint64_t)(uniform() * storm_window_s * 1e6);
        reschedule(i, now);
      }
    }
    if (storm_counting && GET(ctl->storm_over)) storm_counting = 0;
    PUT(me->up, (uint64_t)up_count);
    PUT(me->handshaking, (uint64_t)handshaking);
    uint64_t request = GET(ctl->publish);
    if (request != me->ack) {
      publish_usage();
      __atomic_store_n(&me->ack, request, __ATOMIC_RELEASE);
    }
  }
  /* The summary is taken from what is published now, before the sessions are closed. */
  publish_usage();
  __atomic_store_n(&me->done, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < count; i++) teardown(i, 1, 0);
  SSL_CTX_free(ctx);
  return 0;
}

/* ---- the parent: the workers' statistics summed and merged, the phases decided, every line printed -------------- */

static pid_t *pids; /* the workers' process ids; 0 once reaped */
static int failed;  /* a worker failed: the run is void */
static int killing; /* the parent is killing the workers: their deaths are not news */
static hist_t iv_prev, iv_now, wiv_prev, wiv_now, merged, merged2;
static uint64_t ok_prev;

static uint64_t sum_at(size_t offset) {
  uint64_t total = 0;
  for (int k = 0; k < processes; k++) total += __atomic_load_n((const uint64_t *)((const unsigned char *)worker(k) + offset), __ATOMIC_RELAXED);
  return total;
}
#define SUM(field) sum_at(offsetof(worker_t, field))

/* The workers' histograms at offset merged into out (bucket by bucket; the count is the buckets' sum, so it matches
 * them whatever a worker added meanwhile). */
static void merge_hist(hist_t *out, size_t offset) {
  memset(out, 0, sizeof *out);
  for (int k = 0; k < processes; k++) {
    const hist_t *h = (const hist_t *)((const unsigned char *)worker(k) + offset);
    for (int b = 0; b < HBUCKETS; b++) {
      uint32_t v = GET(h->n[b]);
      out->n[b] += v;
      out->count += v;
    }
    uint64_t max = GET(h->max);
    if (max > out->max) out->max = max;
  }
}

static void kill_workers(int sig) {
  for (int k = 0; k < processes; k++)
    if (pids[k] > 0) kill(pids[k], sig);
}

/* Reaps the workers that ended (waiting for them with block); one that did not exit with 0 voids the run. */
static void reap(int block) {
  for (int k = 0; k < processes; k++) {
    int st;
    if (pids[k] <= 0 || waitpid(pids[k], &st, block ? 0 : WNOHANG) != pids[k]) continue;
    pids[k] = 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
    failed = 1;
    if (killing) continue;
    if (WIFSIGNALED(st)) fprintf(stderr, "coap-fleet: worker %d (devices %d..%d) was killed by signal %d\n", k, (int)((long long)k * n_devices / processes) + 1,
                                 (int)((long long)(k + 1) * n_devices / processes), WTERMSIG(st));
    else fprintf(stderr, "coap-fleet: worker %d (devices %d..%d) exited with status %d\n", k, (int)((long long)k * n_devices / processes) + 1,
                 (int)((long long)(k + 1) * n_devices / processes), WEXITSTATUS(st));
  }
}

/* A worker failed: the others are killed, and the run ends with status 2 (no summary: its numbers would lie). */
static void abandon(void) {
  killing = 1;
  kill_workers(SIGKILL);
  reap(1);
  fprintf(stderr, "coap-fleet: a worker failed; the others are stopped\n");
  exit(2);
}

/* Asks every worker to publish its CPU time and RSS, and waits (at most a second) until they have. */
static void request_usage(void) {
  uint64_t request = ctl->publish + 1, until = now_us() + 1000000u;
  __atomic_store_n(&ctl->publish, request, __ATOMIC_RELEASE);
  for (;;) {
    int all = 1;
    for (int k = 0; k < processes; k++)
      if (pids[k] > 0 && __atomic_load_n(&worker(k)->ack, __ATOMIC_ACQUIRE) != request && !__atomic_load_n(&worker(k)->done, __ATOMIC_ACQUIRE)) all = 0;
    if (all || now_us() >= until) return;
    usleep(1000);
  }
}

/* The workers' CPU time and the parent's own. */
static double fleet_cpu(void) { return (double)SUM(cpu_us) / 1e6 + cpu_seconds(); }

/* The interval's latencies at offset into out: the merged histogram since the start (now) minus the one at the last
 * status line (prev), which then becomes now. */
static hist_t *interval(hist_t *now, hist_t *prev, hist_t *out, size_t offset) {
  merge_hist(now, offset);
  for (int b = 0; b < HBUCKETS; b++) out->n[b] = now->n[b] - prev->n[b];
  out->count = now->count - prev->count;
  out->max = 0;
  memcpy(prev, now, sizeof *now);
  return out;
}

static void status(uint64_t t0, uint64_t now) {
  request_usage();
  hist_t *iv = interval(&iv_now, &iv_prev, &merged, offsetof(worker_t, all));
  hist_t *wiv = interval(&wiv_now, &wiv_prev, &merged2, offsetof(worker_t, wire_all));
  uint64_t ok = SUM(ok);
  printf("status t_s=%.0f up=%llu handshaking=%llu hs_ok=%llu hs_failed=%llu sent=%llu ok=%llu bad=%llu timeouts=%llu retransmits=%llu skipped=%llu "
         "lost=%llu iv_ok=%llu p50_us=%llu p99_us=%llu p999_us=%llu cpu_s=%.2f rss_kb=%llu wire_p50_us=%llu wire_p99_us=%llu wire_p999_us=%llu\n",
         (double)(now - t0) / 1e6, (unsigned long long)SUM(up), (unsigned long long)SUM(handshaking), (unsigned long long)SUM(hs_ok),
         (unsigned long long)SUM(hs_failed), (unsigned long long)SUM(sent), (unsigned long long)ok, (unsigned long long)SUM(bad),
         (unsigned long long)SUM(timeouts), (unsigned long long)SUM(retransmits), (unsigned long long)SUM(skipped), (unsigned long long)SUM(lost),
         (unsigned long long)(ok - ok_prev), (unsigned long long)hist_at(iv, 0.50), (unsigned long long)hist_at(iv, 0.99),
         (unsigned long long)hist_at(iv, 0.999), fleet_cpu(), (unsigned long long)SUM(rss_kb), (unsigned long long)hist_at(wiv, 0.50),
         (unsigned long long)hist_at(wiv, 0.99), (unsigned long long)hist_at(wiv, 0.999));
  fflush(stdout);
  ok_prev = ok;
}

static void storm_report(void) {
  int peak = 0, last = 0;
  uint64_t total = 0, *hps = calloc((size_t)storm_hps_len, sizeof *hps);
  if (!hps) die("calloc");
  for (int k = 0; k < processes; k++)
    for (int s = 0; s < storm_hps_len; s++) hps[s] += GET(worker(k)->storm_hps[s]);
  for (int s = 0; s < storm_hps_len; s++) {
    if (hps[s]) last = s;
    if ((int)hps[s] > peak) peak = (int)hps[s];
    total += hps[s];
  }
  hist_t *back = &merged, *reconnect = &merged2;
  merge_hist(back, offsetof(worker_t, storm_back));
  merge_hist(reconnect, offsetof(worker_t, storm_reconnect));
  int back_count = (int)SUM(back);
  printf("storm devices=%d back=%d window_s=%d all_back_s=%.1f back_p50_s=%.1f back_p99_s=%.1f reconnect_p50_ms=%.0f reconnect_p99_ms=%.0f "
         "hs_peak_per_s=%d hs_mean_per_s=%.0f\n",
         n_devices, back_count, storm_window_s, back_count == n_devices ? (double)back->max / 1e6 : -1.0, (double)hist_at(back, 0.50) / 1e6,
         (double)hist_at(back, 0.99) / 1e6, (double)hist_at(reconnect, 0.50) / 1e3, (double)hist_at(reconnect, 0.99) / 1e3, peak,
         (double)total / (last + 1));
  printf("storm_hps=");
  for (int s = 0; s <= last; s++) printf("%s%llu", s ? "," : "", (unsigned long long)hps[s]);
  printf("\n");
  fflush(stdout);
  free(hps);
}

/* --timeline FILE: one line a second with responses (second n answered, slower than 5 and 10 ms at the device's socket,
 * the slowest), summed over the workers, the slowest of theirs; seconds since the start, those with no response left out. */
static void write_timeline(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); return; }
  fprintf(f, "# start: CLOCK_MONOTONIC %llu us (to align with other traces, perf record -k CLOCK_MONOTONIC)\n", (unsigned long long)ctl->t0);
  fprintf(f, "second answered over_5ms over_10ms max_us\n");
  for (int s = 0; s < TIMELINE_S; s++) {
    uint64_t n = 0, n5 = 0, n10 = 0, max = 0;
    for (int k = 0; k < processes; k++) {
      const worker_t *w = worker(k);
      n += w->tl_n[s];
      n5 += w->tl_5ms[s];
      n10 += w->tl_10ms[s];
      if (w->tl_max_us[s] > max) max = w->tl_max_us[s];
    }
    if (n) fprintf(f, "%d %llu %llu %llu %llu\n", s, (unsigned long long)n, (unsigned long long)n5, (unsigned long long)n10, (unsigned long long)max);
  }
  fclose(f);
}

static void nap_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL); /* a signal ends it early: fine */
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *port = "5684", *ciphers = "PSK-AES128-CCM8", *keys = NULL, *write_path = NULL, *timeline_path = NULL, *first = "127.1.0.1";
  const char *shared_hex = NULL;
  int seconds = 120, status_s = 10, setup_timeout_s = 600, dashboards = 0, random_keys = 0, write_n = 0;
  double storm_at_s = -1;
  enum { O_PER_ADDRESS = 256, O_FIRST, O_STORM_AT, O_STORM_WINDOW, O_SAME_PORT, O_SHARED, O_PUT, O_STATUS, O_WRITE, O_DASH, O_RANDOM, O_SETUP, O_PROCESSES, O_TIMELINE, O_SLOW };
  static const struct option longs[] = {
      {"per-address", required_argument, 0, O_PER_ADDRESS}, {"first-address", required_argument, 0, O_FIRST},
      {"storm-at", required_argument, 0, O_STORM_AT},       {"storm-window", required_argument, 0, O_STORM_WINDOW},
      {"storm-same-port", no_argument, 0, O_SAME_PORT},     {"shared-key", required_argument, 0, O_SHARED},
      {"put", no_argument, 0, O_PUT},                       {"status", required_argument, 0, O_STATUS},
      {"write-keys", required_argument, 0, O_WRITE},        {"dashboards", required_argument, 0, O_DASH},
      {"random-keys", no_argument, 0, O_RANDOM},            {"setup-timeout", required_argument, 0, O_SETUP},
      {"processes", required_argument, 0, O_PROCESSES},     {"timeline", required_argument, 0, O_TIMELINE}, {"slow-log", required_argument, 0, O_SLOW},
      {0, 0, 0, 0}};
  int opt;
  while ((opt = getopt_long(argc, argv, "h:p:n:d:P:j:a:r:K:C:", longs, NULL)) != -1) {
    switch (opt) {
    case 'h': host = optarg; break;
    case 'p': port = optarg; break;
    case 'n': n_devices = atoi(optarg); break;
    case 'd': seconds = atoi(optarg); break;
    case 'P': period_s = atof(optarg); break;
    case 'j': jitter = atof(optarg); break;
    case 'a': in_flight_max = atoi(optarg); break;
    case 'r': hs_rate = atof(optarg); break;
    case 'K': keys = optarg; break;
    case 'C': ciphers = optarg; break;
    case O_PER_ADDRESS: per_address = atoi(optarg); break;
    case O_FIRST: first = optarg; break;
    case O_STORM_AT: storm_at_s = atof(optarg); break;
    case O_STORM_WINDOW: storm_window_s = atoi(optarg); break;
    case O_SAME_PORT: same_port = 1; break;
    case O_SHARED: shared_hex = optarg; break;
    case O_PUT: use_put = 1; break;
    case O_STATUS: status_s = atoi(optarg); break;
    case O_WRITE:
      write_path = optarg;
      if (optind >= argc) { fprintf(stderr, "coap-fleet: --write-keys takes FILE N\n"); return 2; }
      write_n = atoi(argv[optind++]);
      break;
    case O_DASH: dashboards = atoi(optarg); break;
    case O_RANDOM: random_keys = 1; break;
    case O_SETUP: setup_timeout_s = atoi(optarg); break;
    case O_TIMELINE: timeline_path = optarg; break;
    case O_SLOW: slow_log_prefix = optarg; break;
    case O_PROCESSES:
      processes = atoi(optarg);
      if (processes < 1) { fprintf(stderr, "coap-fleet: --processes takes 1 or more\n"); return 2; }
      break;
    default:
      fprintf(stderr, "usage: coap-fleet -K keys.txt [-h host] [-p port] [-n devices] [-d seconds] [-P period_s] [-j jitter] [-a in_flight]\n"
                      "                  [-r handshakes_per_s] [--per-address M] [--first-address A] [--storm-at S] [--storm-window W]\n"
                      "                  [--storm-same-port] [--put] [--status S] [--setup-timeout S] [--processes P] [--timeline FILE] [--slow-log PREFIX] [-C ciphers]\n"
                      "       coap-fleet --write-keys FILE N [--dashboards K] [--random-keys | --shared-key HEX]\n");
      return 2;
    }
  }
  if (write_path) {
    if (write_n < 1 || write_n > 999999 || dashboards < 0 || dashboards > 999) {
      fprintf(stderr, "coap-fleet: --write-keys takes 1..999999 devices, --dashboards 0..999\n");
      return 2;
    }
    uint8_t shared[KEY_LEN];
    if (shared_hex && (random_keys || !parse_hex(shared_hex, shared, KEY_LEN))) {
      fprintf(stderr, "coap-fleet: --shared-key takes a %d-byte key in hex, and not with --random-keys\n", KEY_LEN);
      return 2;
    }
    return write_keys(write_path, write_n, dashboards, random_keys, shared_hex ? shared : NULL);
  }
  struct in_addr a;
  if (n_devices < 1 || n_devices > MAX_DEVICES || seconds < 1 || period_s <= 0 || jitter < 0 || jitter >= 1 || in_flight_max < 1 || hs_rate < 0 ||
      per_address < 1 || per_address > 20000 || status_s < 1 || storm_window_s < 1 || setup_timeout_s < 1 || inet_pton(AF_INET, first, &a) != 1 ||
      !keys || shared_hex) {
    fprintf(stderr, "coap-fleet: -K FILE (--shared-key goes with --write-keys), -n 1..%d, -d 1.., -P > 0, -j 0..<1, -a 1.., -r >= 0, --per-address 1..20000, "
                    "--status 1.., --storm-window 1.., --setup-timeout 1.., --first-address an IPv4 address\n",
            MAX_DEVICES);
    return 2;
  }
  first_address = ntohl(a.s_addr);
  addresses = (uint32_t)((n_devices + per_address - 1) / per_address);
  uint32_t last_address = first_address + addresses - 1;
  if ((first_address >> 24) != 127 || (last_address >> 24) != 127) {
    fprintf(stderr, "coap-fleet: the source addresses (%d devices, %d per address from %s) must stay within 127.0.0.0/8\n", n_devices, per_address, first);
    return 2;
  }
  struct addrinfo *found = resolve_udp("coap-fleet", host, port);
  if (found->ai_family != AF_INET) {
    fprintf(stderr, "coap-fleet: %s is not an IPv4 address: the devices' sources are in 127.0.0.0/8\n", host);
    return 2;
  }
  memcpy(&server, found->ai_addr, sizeof server);
  freeaddrinfo(found);

  ctx = dtls_psk_client_ctx("coap-fleet", ciphers, psk_client);
  /* Memory per session, for 100,000 of them: SSL_MODE_RELEASE_BUFFERS asks for the 16 KB record buffers to be given
   * back between records, but OpenSSL 3.0's DTLS keeps them (measured: 42 KB of RSS a device with it or without), and
   * SSL_free_buffers leaves DTLS with no write buffer to send its next record in (a crash in SSL_shutdown). What
   * works: records of at most 512 bytes (a report is under 200), so the write buffer is small: 38.7 KB a device. */
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_max_send_fragment(ctx, 512);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);

  /* A socket per device, and epoll's and the standard streams' besides: the soft limit raised as far as it goes (past
   * the hard limit for root with CAP_SYS_RESOURCE), and as many worker processes as that takes. */
  raise_open_files((rlim_t)n_devices + 64);
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) die("getrlimit");
  long long room = files.rlim_cur == RLIM_INFINITY || files.rlim_cur > (rlim_t)MAX_DEVICES + 64 ? MAX_DEVICES : (long long)files.rlim_cur - 64;
  if (room < 1) {
    fprintf(stderr, "coap-fleet: the open-file limit is %llu: no room for a device's socket\n", (unsigned long long)files.rlim_cur);
    return 2;
  }
  if (processes == 0) processes = (int)((n_devices + room - 1) / room);
  if (processes > n_devices || processes > MAX_PROCESSES) {
    fprintf(stderr, "coap-fleet: --processes takes 1 to %d (and at most one a device)\n", MAX_PROCESSES);
    return 2;
  }
  if ((n_devices + processes - 1) / processes > room) {
    /* Said now rather than at the socket that fails, minutes into the setup. */
    fprintf(stderr, "coap-fleet: %d devices over %d processes need %d open files each and the limit is %llu (hard limit %llu): "
                    "at least %lld processes (--processes, or leave it out)\n",
            n_devices, processes, (n_devices + processes - 1) / processes + 64, (unsigned long long)files.rlim_cur, (unsigned long long)files.rlim_max,
            (n_devices + room - 1) / room);
    return 2;
  }
  read_keys(keys, n_devices, 0, 0); /* what is wrong with the file, said once, before any worker starts */
  storm_hps_len = storm_window_s + 300;

  /* The statistics and the parent's word, shared with the workers (mapped before they are forked, so they inherit it). */
  worker_stride = (sizeof(worker_t) + (size_t)storm_hps_len * sizeof(uint32_t) + 63) & ~(size_t)63;
  size_t shared = 4096 + (size_t)processes * worker_stride;
  unsigned char *mem = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) die("mmap");
  ctl = (control_t *)mem;
  workers_mem = mem + 4096;
  pids = calloc((size_t)processes, sizeof *pids);
  if (!pids) die("calloc");

  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid();
  ctl->t0 = now_us();
  for (int k = 0; k < processes; k++) {
    /* Worker k: devices [k N / P, (k + 1) N / P), and its share of the setup's pacing, so the totals stay -a and -r. */
    int lo = (int)((long long)k * n_devices / processes), hi = (int)((long long)(k + 1) * n_devices / processes);
    int k_in_flight = in_flight_max / processes + (k < in_flight_max % processes ? 1 : 0);
    pid_t pid = fork();
    if (pid < 0) {
      perror("coap-fleet: fork");
      abandon();
    }
    if (pid == 0) {
      /* A worker dies with the parent (or never starts without it). */
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(2);
      exit(run_worker(k, keys, lo, hi, k_in_flight > 0 ? k_in_flight : 1, hs_rate / processes));
    }
    pids[k] = pid;
  }

  uint64_t t0 = ctl->t0, next_status = t0 + (uint64_t)status_s * 1000000u, setup_done = 0, end = 0, storm_due = 0, storm_end = 0;
  uint64_t rss_setup = 0, rss_growth = 0;
  int storm_active = 0, worker_stopped = 0;
  while (!stopping) {
    nap_ms(10);
    reap(0);
    if (failed) abandon();
    for (int k = 0; k < processes; k++) worker_stopped |= (int)__atomic_load_n(&worker(k)->done, __ATOMIC_ACQUIRE);
    if (worker_stopped) break; /* a signal stopped a worker: the fleet stops with it */
    uint64_t now = now_us();
    int up = (int)SUM(up);
    if (!setup_done && (up == n_devices || now - t0 >= (uint64_t)setup_timeout_s * 1000000u)) {
      /* Every device of the fleet is up: the reporting phase begins for every worker at once, and the storm's start
       * is known to them from now on. */
      setup_done = now;
      PUT(ctl->report_start, now);
      end = now + (uint64_t)seconds * 1000000u;
      if (storm_at_s >= 0) {
        storm_due = now + (uint64_t)(storm_at_s * 1e6);
        PUT(ctl->storm_start, storm_due);
      }
      request_usage();
      rss_setup = SUM(rss_kb);
      rss_growth = rss_setup - SUM(rss0_kb);
      double secs = (double)(now - t0) / 1e6;
      printf("setup devices=%d up=%d failed=%llu seconds=%.1f hps=%.0f ok=%llu rss_kb=%llu rss_per_device_b=%.0f\n", n_devices, up,
             (unsigned long long)SUM(hs_failed), secs, n_devices / secs, (unsigned long long)SUM(ok), (unsigned long long)rss_setup,
             (double)rss_growth * 1024 / n_devices);
      fflush(stdout);
    }
    if (storm_due && now >= storm_due) {
      printf("storm_begins t_s=%.0f devices=%d window_s=%d\n", (double)(storm_due - t0) / 1e6, n_devices, storm_window_s);
      fflush(stdout);
      storm_active = 1;
      storm_end = storm_due + (uint64_t)(storm_window_s + 120) * 1000000u;
      storm_due = 0;
    }
    if (storm_active && ((int)SUM(back) == n_devices || now >= storm_end)) {
      storm_active = 0;
      PUT(ctl->storm_over, 1);
      storm_report();
    }
    if (now >= next_status) {
      status(t0, now);
      next_status += (uint64_t)status_s * 1000000u;
    }
    if (end && now >= end && !storm_active && !storm_due) break;
  }

  /* The end: every worker publishes its last statistics and stops (a signal to the parent is passed on as well). */
  uint64_t stop = now_us();
  PUT(ctl->stop, 1);
  if (stopping) kill_workers(SIGTERM);
  for (uint64_t until = stop + 60000000u;;) {
    int all = 1;
    reap(0);
    if (failed) abandon();
    for (int k = 0; k < processes; k++)
      if (pids[k] > 0 && !__atomic_load_n(&worker(k)->done, __ATOMIC_ACQUIRE)) all = 0;
    if (all) break;
    if (now_us() >= until) {
      fprintf(stderr, "coap-fleet: a worker did not stop within 60 s\n");
      abandon();
    }
    nap_ms(10);
  }
  if (storm_active) {
    PUT(ctl->storm_over, 1);
    storm_report();
  }

  hist_t *run = &merged, *wire = &merged2;
  merge_hist(run, offsetof(worker_t, run));
  merge_hist(wire, offsetof(worker_t, wire_run));
  uint64_t ok = SUM(ok);
  double run_s = setup_done ? (double)(stop - setup_done) / 1e6 : 0, cpu = fleet_cpu();
  printf("summary devices=%d up=%llu seconds=%.0f sent=%llu ok=%llu bad=%llu timeouts=%llu retransmits=%llu skipped=%llu lost=%llu reports_per_s=%.1f "
         "p50_us=%llu p99_us=%llu p999_us=%llu max_us=%llu hs_ok=%llu hs_failed=%llu cpu_s=%.2f cpu_us_per_report=%.1f rss_kb=%llu rss_per_device_b=%.0f "
         "wire_p50_us=%llu wire_p99_us=%llu wire_p999_us=%llu wire_max_us=%llu\n",
         n_devices, (unsigned long long)SUM(up), run_s, (unsigned long long)SUM(sent), (unsigned long long)ok, (unsigned long long)SUM(bad),
         (unsigned long long)SUM(timeouts), (unsigned long long)SUM(retransmits), (unsigned long long)SUM(skipped), (unsigned long long)SUM(lost),
         run_s > 0 ? (double)run->count / run_s : 0, (unsigned long long)hist_at(run, 0.50), (unsigned long long)hist_at(run, 0.99),
         (unsigned long long)hist_at(run, 0.999), (unsigned long long)run->max, (unsigned long long)SUM(hs_ok), (unsigned long long)SUM(hs_failed), cpu,
         ok ? cpu * 1e6 / (double)ok : 0, (unsigned long long)SUM(rss_kb), setup_done ? (double)rss_growth * 1024 / n_devices : 0,
         (unsigned long long)hist_at(wire, 0.50), (unsigned long long)hist_at(wire, 0.99), (unsigned long long)hist_at(wire, 0.999),
         (unsigned long long)wire->max);
  fflush(stdout);
  if (timeline_path) write_timeline(timeline_path);
  reap(1); /* the workers close their sessions and exit */
  if (failed) return 2;
  return setup_done && ok > 0 ? 0 : 1;
}
