#!/usr/bin/env python3
"""A stand-in step program (or reference program) for lab_grade_check's own
tests: it answers `--serve VARIANT` over the grader's pipe (lab/grade_wire.hpp)
with no GPU, so the checker's GPU rules run on any machine.

    fake_serve.py --serve VARIANT     (FAKE_MODE says how it behaves)

FAKE_MODE:
  product:SECONDS[:START]
                    computes C = alpha A B + beta C as the request's repeat calls
                    would (B, and A where refill_a, refilled before each but the first) and sleeps
                    SECONDS per call, as a GPU product would take, and START
                    once after reading a request of the timed shape (a slow start-up)
  stale:SECONDS     the same, but C as one call makes it, however many calls
                    (a kernel that remembers its first answer)
  scaled:SECONDS    the first call's C times 2^(repeat - 1) (a kernel that
                    remembers its first answer and scales it, against inputs
                    that were only doubled)
  stall:SECONDS:EXTRA
                    as product, but sleeps EXTRA more where the request has one
                    call (a program that stalls its one-call answers, so that
                    the 1 + K calls look little longer than one)
START and EXTRA apply to requests of the timed shape only (a speed case's:
m = n = k = lda = ldb = ldc, alpha 1, beta 0), so that the correctness cases
before it need not wait for them.
  exec              starts another program in its place (itself as product:0,
                    which would answer right)
  spawn             starts a child program (true); answers as product:0 where
                    the child could not run, else an error
  no_device:WHY     answers kNoDevice with WHY (a machine without the GPU)
  no_variant:WHY    answers kNoVariant with WHY (a build without the variant)
  done              computes nothing and answers kDone (the reference's "gpu")
FAKE_LOG, when set: each request's repeat, Params, pinned_host and refill_a are appended there.
"""
import os
import struct
import sys
import time

REQUEST = struct.Struct("<Q7q2dq3qqq8qqQq")  # magic, m n k kb lda ldb ldc, alpha beta, repeat, tile, mem, gpus, ids,
#                                               pinned, refill_seed, refill_a
REPLY = struct.Struct("<Qqq")
REQUEST_MAGIC, REPLY_MAGIC = 0x344B43454843424C, 0x3159524C5045524C
MASK = (1 << 64) - 1
DONE, OTHER_ERROR, NO_VARIANT, NO_DEVICE = 0, 3, 4, 5


def read(n):
    data = b""
    while len(data) < n:
        chunk = sys.stdin.buffer.read(n - len(data))
        if not chunk:
            sys.exit("fake_serve: the request ended early")
        data += chunk
    return data


GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    """lab/random.hpp's mix64."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def refill(seed, call, which, count):
    """lab/refill.hpp's numbers, the same bits: 2 random_unit(key, i, 0) - 1."""
    key = mix64(seed ^ mix64((((call << 1) | which) + GOLDEN) & MASK))
    col = mix64(key)  # random_unit's mix64(seed + GOLDEN * j) at j = 0
    return [2.0 * ((mix64(col ^ i) >> 11) * 2.0 ** -53) - 1.0 for i in range(count)]


def elements(ld, cols):
    return max(ld, 1) * max(cols, 0)


def main():
    out = os.fdopen(os.dup(1), "wb")
    mode, _, arg = os.environ.get("FAKE_MODE", "product:0").partition(":")
    if mode == "exec":
        os.environ["FAKE_MODE"] = "product:0"
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    arg, _, start = arg.partition(":")
    f = REQUEST.unpack(read(REQUEST.size))
    magic, m, n, k, kb, lda, ldb, ldc, alpha, beta, repeat = f[:11]
    tile, mem, gpus, ids, pinned, seed, refill_a = f[11:14], f[14], f[15], f[16:24], f[24], f[25], f[26]
    if magic != REQUEST_MAGIC:
        sys.exit("fake_serve: not a request")
    a = struct.unpack(f"<{elements(lda, k)}d", read(8 * elements(lda, k)))
    b = struct.unpack(f"<{elements(ldb, n)}d", read(8 * elements(ldb, n)))
    c = list(struct.unpack(f"<{elements(ldc, n)}d", read(8 * elements(ldc, n))))
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write(f"{sys.argv[2]} repeat={repeat} tile={list(tile)} mem={mem} gpus={list(ids[:gpus])} pinned={pinned}"
                      f" refill_a={refill_a}\n")
    status, msg = DONE, b""
    if mode == "no_device":
        status, msg = NO_DEVICE, arg.encode()
    elif mode == "no_variant":
        status, msg = NO_VARIANT, arg.encode()
    elif mode == "spawn":
        import subprocess
        if subprocess.run(["true"]).returncode == 0:
            status, msg, mode = OTHER_ERROR, b"the child program ran", ""
        else:
            mode, arg = "product", "0"
    if not (m == n == k == lda == ldb == ldc and alpha == 1.0 and beta == 0.0):
        start = ""  # (not a speed case's request: no slow start, no stall)
        if mode == "stall":
            mode = "product"
    if mode in ("product", "stale", "scaled", "stall"):
        if mode == "stall":
            mode = "product"
            time.sleep(float(start) if repeat <= 1 else 0.0)
            start = ""
        time.sleep(float(start or 0))
        last, scale = max(repeat, 1) - 1, 1.0
        if mode == "product" and last > 0:  # the last call's inputs
            b = refill(seed, last, 1, len(b))
            if refill_a:
                a = refill(seed, last, 0, len(a))
        elif mode == "scaled":
            scale = 2.0 ** last
        for j in range(n):
            for i in range(m):
                s = sum(a[i + p * lda] * b[p + j * ldb] for p in range(k))
                c[i + j * ldc] = alpha * scale * s + (beta * c[i + j * ldc] if beta != 0 else 0.0)
        time.sleep(float(arg or 0) * max(repeat, 1))
    out.write(REPLY.pack(REPLY_MAGIC, status, len(msg)) + msg + struct.pack(f"<{len(c)}d", *c))
    out.flush()


if __name__ == "__main__":
    main()
