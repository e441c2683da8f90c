"""The io_uring engine against fio at QD1, against fio's ``t/io_uring`` at its batches, and the
cost and quality of random write data (issue 29, items 1–3).

    .venv/bin/python tests/bench/engine_ring.py [--time-s 2] [--pairs 8]

Everything runs on a loop device over a tmpfs file made here, and the QD1 and ``t/io_uring``
rows again on a page-cached file on ext4 on another such loop device
(``engine.page_cached_file``; root only; without root the module prints why and returns). Each
tool runs as a child process, alternately (ABAB…), and each row gives the median over the pairs of the per-pair ratio flashback / anchor with its
range, and the load average. The QD1 rows run flashback as users do, ``fb.run`` from Python in
a child interpreter; the other rows run it from Rust (``native/examples/fb_run.rs``, the same
engine ``flashback run`` drives, without the interpreter), CPU from ``wait4`` on both sides.

Rows:

* **QD1** 4 KiB randread, ``fb.run`` vs ``fio --ioengine=io_uring``: IOPS and p50 latency
  (fio's ``lat``, which starts when fio queues the I/O, as flashback's does; target within 5 %),
  in three regimes (``REGIMES``): as the machine is ("quiet"), with one ``nice -n 19`` busy loop
  per CPU in a session of their own ("loaded": no idle CPU, so no wake-up from an idle state;
  other work on a machine runs in sessions, so scheduler autogroups, of its own), and with the
  same loops in the tools' session. fio forks its job and the job calls ``setsid()``
  (``backend.c`` ``thread_main``), so fio's job is never in the loops' autogroup; ``fb.run``
  does the same by default (``session="own"``, issue 29), and in the third regime
  ``fb.run(session="shared")``, the job on a thread of the interpreter and so in the loops'
  autogroup, runs as a fourth tool. At QD1 each I/O is two
  wake-ups: the loop device's worker (a kworker) by the tool's submission, the tool by the
  completion. Where the scheduler puts that worker decides a run: on the tool's CPU the two
  alternate there; on the other CPU every wake-up crosses CPUs, which on this VM costs an
  interrupt to a busy or halted virtual CPU, and the run's IOPS drop by an order of magnitude
  while p50 may not move. Both tools land in either mode, run by run (the rows' ranges), and
  other work on the machine at nice 0 adds run-queue waits of whole scheduler ticks to both.
  To see which mode a run was in: ``perf sched record -a`` around it, then
  ``perf sched timehist`` (the tool's and the kworker's CPU and scheduling delay per wake-up).
  Each regime's rotation also runs fio a second time: its ratios against the first fio
  (the "control" line) are what the rotation's noise alone gives, the yardstick for
  flashback's. Each ratio line ends with its verdicts: the 90 % bootstrap interval of the
  median pair ratio (pairs resampled) and "met" when all of it is on the target's side,
  "missed" when all of it is beyond, "unresolved" when it straddles the target; a regime whose
  control is not "met" cannot resolve 5 % with that many pairs. Then a line counts the runs of each tool that were split (p50 over
  ``SPLIT_X`` times the row's smallest) and gives the ratios over the pairs where neither
  was: the engine's own cost, which the headline ratios mix with the scheduler's draw.
  Measured (issue 29, 2026-11-26, load 5–9 from other work; 1–2 s runs, alternating or back
  to back): split in 32 % of flashback's runs (58/183) and 24 % of fio's (36/153), in streaks
  of consecutive runs of either tool that follow the other work on the machine. Running the
  job on a thread of its own (as fio forks its job once set up), without the run's 20 ms
  multishot timeout, or both, gave 15–31 % over 38–148 runs each, and none beat the default
  in a head-to-head sequence (30 runs each: 27 % and 20 % against 20 %): none was kept.
  Sharing a CPU, flashback's p50 is mostly at or below fio's (4.0–4.5 against 4.3–4.9 µs).
  At that load fio missed the 5 % targets against itself (8 pairs of 2 s: IOPS 0.66,
  0.55–1.70; p50 1.02, 0.51–7.71).
  Session 14 (load 3.5–5 from other work, 8 pairs of 2 s): ``fb.run`` against fio, IOPS and p50
  ratio, quiet 1.12 and 0.91, loaded 1.04 and 0.94, loops in the tools' session 1.26 and 0.85
  (fio against itself: 1.01/0.99, 0.80/0.99, 1.49/0.99); split runs fio 1, 0, 0 and ``fb.run``
  0, 1, 2 of 8, ``fb.run`` in its own session 2 of 8; a second run (other work 28–52 % of the
  CPUs): p50 ratio 0.93, 0.96, 0.93, split runs 0–2 of 8 for every tool, IOPS ratios 0.41–1.35
  with fio against itself at 0.76–1.81. The regime where ``fb.run`` split in every run and fio in
  a quarter (the machine idle but for the loops, which were then in the tools' session) did not
  occur while this was measured, and in 30 interleaved rounds under the loops in the tools'
  session (other work ~64 % of the CPUs) a session of its own changed neither tool's split rate
  (fast runs: ``fio --thread`` 19 and 21 of 30 without and with ``setsid``, ``fb.run`` 22 and
  16, fio 21): the autogroup is fio's one remaining structural difference, not a shown cause.
  Session 15 made it the default (``fb.run(session="own")``, the job in a forked child that calls
  ``setsid()``). With other work at 1–3 % of the CPUs (18:35–18:39, load 2.0–4.9, 8 pairs of
  2 s), ``fb.run`` / fio, IOPS and p50: quiet 1.01 (0.64–1.10) and 0.94 (0.90–1.21), loaded 0.72
  and 0.99, loops in the tools' session 0.82 and 0.98, with fio against itself at 0.90/1.01,
  0.66/1.00, 0.71/1.02; there ``fb.run(session="shared")`` had p50 2.76 and split 6 of 8
  against 4 of 8 in its own session and fio's 2 of 8. With other work at 39–68 %: IOPS and
  p50 0.61/0.96, 1.09/0.94, 0.65/0.97 (fio against itself 0.84/1.02, 1.18/0.95, 0.95/1.02, IOPS
  ranges 0.07–20), and in 48 interleaved rounds with the loops in the tools' session (53–68 %
  other work) fast runs were 34 in its own session, 36 shared, 40 for fio (Fisher p 0.82 own
  against shared): no effect of the session there, as session 14 found at ~64 %.
  Session 16, with the verdicts (16 pairs of 2 s, other work 24–34 % of the CPUs, load 3.3–6.6):
  p50 met quiet (0.95; interval 0.92–1.02) and loaded (0.92; 0.91–0.95), unresolved with the
  loops in the tools' session (1.56; 0.99–9.99) where fio against itself is unresolved too
  (1.00–5.73); IOPS unresolved in all three (0.38–1.51, 0.95–2.14, 0.08–1.07), as fio against
  itself is (0.78–1.64, 0.76–1.88, 0.31–1.47): a run's IOPS is decided by whether the loop
  device's worker shares the tool's CPU (5–8 of 16 runs split per tool), so on this VM 16
  pairs cannot resolve 5 % in IOPS for fio against itself, let alone for flashback.
  Session 17, another VM (fresh machine, no other work; 16 pairs of 2 s, load 1.3–3.4): fio's
  QD1 is 3× slower here (32k IOPS, p50 14.4 µs) and ``fb.run`` missed both targets in the
  quiet regime (IOPS 0.89, interval 0.79–0.94; p50 1.54, 1.08–2.46) while fio against itself
  was unresolved (0.85–1.05, 0.85–1.21); the loaded regimes were pathological for both tools
  (fio 1,264 IOPS, some runs near 0 I/Os a second; why was not looked into), all
  unresolved. Where the quiet gap comes from: fio completes most
  I/Os inside its submitting ``io_uring_enter`` (fio's clat p50 0.5–0.8 µs, slat 10–13 µs,
  lat p50 9.7–11.7 µs; ``--thread`` the same), flashback never does (p50 16.7–20 µs); the
  means are equal (fio 28–37 µs, flashback 27–36 µs). Not the cause, each
  tried on ``fb_run`` (3 runs of 2 s each): registering neither the file nor the buffers (p50
  16.7), ``IORING_ENTER_GETEVENTS`` on the submitting enter as fio passes (17.9–33.7), a session
  of its own (17.0–39.6). ``fio --fixedbufs --registerfiles`` loses its inline completions too
  (clat p50 8–10 µs, lat p50 16.5–19.8 µs); why was not established. Later the same evening (after
  a CI run) fio no longer completed inside the submit either (clat p50 8.3–8.5 µs, lat p50
  17.0–17.5 µs) and flashback's p50 was 29.6–35.8 µs; handing over and waiting in one enter,
  as the engine did before session 11, gave 29.5–30.7 µs and 30.7–38.3k IOPS against
  31.4–33.8k (4 runs of 2 s each): no clear difference either way. Where the CPU goes at QD1
  (``perf record -g -e cpu-clock``, 1 s each): the same kernel path for both tools, the
  submit's ``loop_queue_rq`` waking the loop device's worker (``_raw_spin_unlock_irq``, where
  the wake-up's cost lands on this VM: 28 % of flashback's samples, 19 % of fio's) and the
  wait's ``schedule`` (53 % and 26 %); fio's own clock reads another 17 %. ``perf sched
  timehist``: flashback's job ran 15 µs per wake-up (median) against fio's 10 and waited 9.1 µs
  (mean) for a CPU once woken against 4.9; both woken by ``ksoftirqd`` nearly every time.
  Pinned (``taskset -c 0`` on both, 3 interleaved runs of 2 s): flashback p50 10.5–11.3 µs
  and 29–43k IOPS, fio 11.3–11.8 µs and 24–39k; unpinned in the same minutes flashback
  11.6–18.2 µs, fio 11.1–12.1 µs: the quiet miss is where flashback's job runs relative to the
  loop device's worker, not the engine's own work per I/O.
  Session 18 (same VM, no other work; 16 pairs of 2 s, load 1.3–3.5) added the fourth regime,
  "quiet, both pinned to one CPU": each tool's job on the machine's last allowed CPU by its
  own ``cpus_allowed`` option (fio's ``--cpus_allowed``; flashback's workload field of that
  name, added for this). Pinned, ``fb.run`` met both targets: IOPS 1.06 (interval 1.04–1.09),
  p50 0.92 (0.77–0.94), with fio against itself met too (0.99–1.06, 0.88–1.00). Unpinned in
  the same minutes it missed both: IOPS 0.87 (0.79–0.92), p50 1.60 (1.27–2.30), control
  unresolved; fb.run's p50 was over 3× the row's smallest in 4 of 16 runs, fio's in 0. Run by
  run a tool's p50 is either fast (9.9–10.4 µs for ``fb_run``, 10.4–11.2 for fio) or slow
  (15–44 µs), for every tool; ``t/io_uring -d1``'s IOPS swung as much (23–35k across 4
  runs): in 5 interleaved runs each, slow runs were 1 of 5 for ``fb_run``, 2 for ``fb.run``, 4
  for ``fb.run(session="shared")``, 0 for fio, and in another 4 fio had 3 and ``fb_run`` 1.
  This VM's idle CPUs halt at once (cpuidle ``haltpoll`` with ``guest_halt_poll_ns`` 0, its
  POLL state never used), so a hand-over between the job and the loop device's worker on
  different CPUs pays a halted CPU's wake-up. Why flashback's I/Os cross more often than fio's
  was not found (per-I/O syscalls are the same two ``io_uring_enter`` calls, ``strace``;
  context switches per I/O 1.00–1.01 against 1.04, ``perf stat``); pinning, which labs use for QD1
  latency, takes the draw away. The loaded regimes swung 0.02–78× run to run for every tool
  (fio 656 IOPS median): their verdicts now read "no verdict" where fio against itself does
  not meet the target, which turned the loaded row's IOPS "met" (interval 1.42–9.57, control
  0.76–3.46) into no verdict. A lead for the next look: what the loop device reads matters.
  With ``fb_run`` and fio alternating on two loop devices at once (8 rounds of 2 s), one
  prefilled as this bench's is and one never written (reads of holes), on the holes
  ``fb_run`` had p50 8.3–8.8 µs in all 8 runs against fio's 9.4–12.0 (IOPS 38.3k against
  33.9k), on the prefilled device p50 17.0 against 12.9 (medians) while its IOPS were still
  higher (30.3k against 27.2k): the p50 gap shows where the loop device copies real pages,
  and it comes with a different latency distribution, not a lower rate. On the prefilled
  device every run of either tool mixes two modes I/O by I/O (4 alternating pairs of 2 s,
  percentiles from 5 to 99): a fast one at 7.9–10 µs and a slow one at 42–52 µs, with little
  between. Within each mode flashback is the faster (5th percentile 7.9–8.1 µs against fio's
  8.6–8.8), but fewer of its I/Os are fast: its 40th percentile was 10.1–17.2 µs against fio's
  9.8–10.0, so its p50 (13.4–35.6 µs) falls in or past the gap while fio's (10.7–16.5) mostly
  does not. A p50 so near the boundary between two modes jumps with a few per cent of I/Os
  changing mode, which is why the quiet rows swing as they do; IOPS, from the mean, moves
  less (fb_run 25.6–36.7k against fio's 33.9–42.2k in those runs).
  Session 19 (same VM kind, no other work, prefilled device, 6–8 interleaved rounds of 2 s
  per comparison): in 8 rounds of fio, ``fb_run`` and ``fb.run`` fio had the lowest p50 in
  every round (fio 9.4–13.5 µs and 34–56k IOPS; ``fb_run`` 17.5–38.1 µs, 24–35.5k; ``fb.run``
  18.8–42.3 µs), so the unpinned miss is the engine's, not the interpreter's. Each of these, tried on ``fb_run``
  (test builds, not kept), left it in the same range: no registered buffers; no registered
  buffers, file or ring descriptor and no multishot timeout; ``setsid`` (a session and
  autogroup of its own); a process waking every 10 ms beside it (fio's parent polls at that
  rate); reporting before the hand-over; hand-over and wait in one enter; ``GETEVENTS`` on
  the handing-over enter. fio's own ``--thread`` changed nothing, ``--fixedbufs`` made fio
  slower (p50 10.4–23.2 against 10.4–15.8). The job thread's scheduler counters
  (``/proc/PID/sched`` read once at 1.9 s) show what a fast run is: fio's runs at p50
  9.7–10.9 µs had 0.52–0.54 involuntary switches per I/O (the loop device's worker, woken by
  the submission, takes the CPU at once and the read is done before the job waits), its runs
  at 13.6–14.8 µs 0.42–0.43, ``fb_run``'s (15.8–40.4 µs) 0.25–0.46, while migrations per I/O were alike (0.08–0.11
  and 0.05–0.09). A ``sched_yield()`` after each QD1 hand-over (test build) cut ``fb_run``'s
  migrations to 0.002–0.007 per I/O and still left 2 of 5 runs slow (p50 40.5 and 41.4 µs):
  the slow mode is not the job moving, so it is where the worker runs. Spending time in the
  job makes it worse, not better: a 2 µs spin between hand-over and wait made 6 of 6 runs
  slow (p50 35–47 µs), a 3 or 8 µs spin after each completion moved p50 to 18.8–40.5 and
  33.9–49.7 µs (10.2–22.9 without). ``perf sched record`` changes what it watches here (fio's
  p50 rose to 21 µs under it) and was not used to decide anything. What makes the kernel run
  the worker beside fio's job more often than beside flashback's was not found.
  Session 20 moved the QD1 rows' verdict to where the engines decide it: a page-cached file on
  ext4 (``engine.page_cached_file``, on a loop device over tmpfs made here), read buffered by
  both tools (fio with ``--invalidate=0``, as flashback never drops the cache), where the kernel
  does each read inside the enter that submits it and wakes no other thread (zram and tmpfs,
  also tried, hand every read to an ``iou-wrk`` worker, the same draw as the loop device's).
  There fio reaps its ring before it waits and makes one enter per I/O where flashback made
  two; flashback now reaps first too (``Ring::wait``). 16 pairs of 2 s, no other work, load
  1.1–2.8: ``fb.run`` IOPS 1.55 × fio's (interval 1.50–1.62), p50 0.69 (0.67–0.72) quiet;
  1.64 (1.55–1.68) and 0.66 (0.64–0.71) loaded; fio against itself met in both (IOPS
  1.00–1.07 and 1.02–1.16, p50 0.96–0.99 and 0.85–0.99); main's ``fb_run`` before the change,
  two enters per I/O, 1.34 and 1.38 in IOPS, 0.81 in p50. On the loop device in the same hour
  (8 pairs) fio against itself met nothing in any regime (its IOPS intervals 0.71–1.15,
  0.95–1.64, 0.82–5.23, 0.56–1.14): no verdict there.
* **t/io_uring** 4 KiB randread QD32, CPU per I/O at submit/complete batches 4/1, 8/8 and 32/32
  (``fb_run --batch S/C`` against ``t/io_uring -sS -cC``, registered files, buffers and ring on
  both sides, no polling, ``t/io_uring`` without latency tracking while flashback records every
  I/O's). A second anchor in the same rotation is ``t/io_uring -t1``, its latency-tracking mode
  (one TSC reading per submitted batch, a histogram update per batch of completions): the
  target stays against ``-t0``; the row prints both. Every tool's I/Os are the loop device's
  own count of reads completed during its run (``t/io_uring`` prints only whole seconds' IOPS;
  its first second times the run time was 0.54–1.60× the device's count in 24 runs of 2 s here),
  and a second line per row splits each tool's CPU into user and system µs per I/O with its
  voluntary and forced context switches per 1,000 I/Os (``wait4``, all threads). Measured
  (issue 29, 2026-11-26, 8 pairs of 2 s, load 1.3–1.8, main's build as flashback and as
  "before"): CPU/IO ratio 1.12 / 1.11 / 1.12 at 4/1, 8/8, 32/32 (ranges within 1.03–1.34),
  the same build as "before" 1.17 / 1.11 / 1.09; at load 4.6–5.8 the ranges were 0.3–3.4
  and the same build differed from itself by up to 0.3. Enters, context switches and
  completions per I/O are equal at 8/8 and 32/32 (4/1: flashback enters 0.32–0.35 per I/O
  against 0.28–0.31, as it refills every freed slot where ``t/io_uring`` refills at most 4 per
  wait); the difference of 1 s and 4 s runs gives 1.03 (4/1) and 1.05 (32/32) per I/O, and
  a per-run intercept of 6–48 ms of CPU for ``fb_run`` (medians 26 and 34 ms) against 0–20 ms
  for ``t/io_uring`` (medians 10 and 13 ms): on 2 s runs that intercept is about half of the
  excess. That intercept is start-up paid cold: a whole ``fb_run`` of ``time=1ms`` costs
  4–8 ms of CPU right after another run but 22–63 ms (median 50) after a 2 s pause, as every
  run in the rotation follows seconds of the other tools' runs; run right before it, the same
  binary exiting at its argument check or a Python scan of ``/proc/*/ns/mnt`` each bring it to
  ~22 ms, a whole run to ~9 ms (issue 29, session 15, load 2.5–4.5). On this VM the first
  touch of memory after a pause costs far more than the next: the same ``/proc`` scan in one
  process takes 0.8 ms again at once, 3.5 ms after 0.1 s and 15–20 ms after 1–2 s, and probing
  the namespaces through pidfds instead of ``/proc/PID/ns/mnt`` was no cheaper (7–10 ms cold).
  By phase (perf, 20 kHz, runs of 1 s at 32/32): before the first ``io_uring_enter`` 12–13 ms
  for ``fb_run`` against 3–4.5 ms for ``t/io_uring``, after the last 1.4–2.9 against 0.6–1.7;
  of ``fb_run``'s start-up, the write guard's scan of every mount namespace
  (``engine::safety``) ~8 ms, loading and relocating the 3.6 MB binary 1.5–4 ms, the drive and
  platform records ~1.3 ms, ring and buffers ~1 ms. A ``time=1ms`` run in the rotation
  (``fb_start``) prints that cost beside each row. Between a run's first and last
  ``io_uring_enter`` (perf, 16 interleaved pairs of 1 s at 32/32, load ~4) ``fb_run`` spent
  146 ns of user time per I/O against 38 and 1.06× ``t/io_uring``'s kernel time; the largest
  kernel difference, importing one of 32 registered buffers per I/O (23.5 against ~11 ns/IO),
  went when the buffers were registered as one, as ``t/io_uring`` does. With that, 8 pairs of
  2 s (load 1.8–4.7): CPU/IO ratio 1.29 / 1.18 / 1.13 at 4/1, 8/8, 32/32 against 1.17 / 1.18 /
  1.13 for the build before it in the same rotation (ranges 0.35–1.78: not resolved), start-up
  15–22 ms, 4.4–6.2 % of a 2 s run's CPU. Session 16 cut the loop's user-space instructions
  (``engine_instr.py``: 412 → 346 per I/O at 32/32): 8 pairs of 2 s at load 3.2–4.1, CPU/IO
  ratio 1.07 / 1.24 / 0.96 at 4/1, 8/8, 32/32 against 1.23 / 1.20 / 0.99 for the build before
  (ranges 0.31–4.34: not resolved); user µs/IO (whole runs, start-up included) 0.300 / 0.121 /
  0.069 against 0.282 / 0.151 / 0.110 before and ``t/io_uring``'s 0.107 / 0.039 / 0.018; a
  second run (load 2.3–3.0): CPU/IO 1.16 / 1.06 / 1.18 against 1.10 / 1.09 / 1.17 before, user
  µs/IO 0.225 / 0.110 / 0.090 against 0.192 / 0.102 / 0.060: whole-run user time does not
  resolve a 0.01–0.03 µs/IO cut here either way.
  Session 17 added the control (``t/io_uring`` against itself in the same rotation), the
  verdict and the user-time line, and runs a job that only reads without the write guard (as
  users and ``t/io_uring`` do; ``fb_run`` start-up 3.0 ms). 16 pairs of 2 s, fresh VM, no
  other work, load 1.4–2.6: CPU/IO ratio 1.02 / 1.03 / 1.02 at 4/1, 8/8, 32/32, 90 % intervals
  0.99–1.06, 0.96–1.05, 0.98–1.12: unresolved, as the control's are 0.99–1.04, 0.92–1.04,
  0.89–1.02 wide; flashback's user time beyond ``t/io_uring``'s 0.025 / 0.061 / 0.031 µs/IO,
  1.5 / 3.0 / 2.0 % of ``t/io_uring``'s CPU/IO (system time 1.4–1.9 µs/IO for every tool):
  recording every I/O's latency and the full-coverage offset permutation, which ``-t0`` does
  not do, are what the ratio's expectation sits above 1.0 by; against ``-t1`` 1.01 / 1.01 /
  1.06.
  Session 19 counted ``io_uring_enter`` calls per I/O (``perf stat -e
  syscalls:sys_enter_io_uring_enter``, the device's read count, 2 runs of 2 s each): equal at
  32/32 (0.0313 / 0.0313–0.0314), at 8/8 ``t/io_uring`` exactly 0.125 against 0.1276–0.1281,
  at 4/1 0.273–0.297 against 0.298–0.314. At 8/8 the difference is the depth: ``t/io_uring``
  submits whole batches only, so slots freed beyond a batch wait for the next round, while
  flashback refills every freed slot (mean in flight 31.9 of 32) and hands the remainder over
  in an enter of its own. A test build that held the remainder back made 0.1251 enters per
  I/O at 31.6 in flight; its CPU per I/O was not told apart from either (1.5–2.3 µs/IO for the
  same tool run to run under ``perf stat``), and it was not kept: the depth a job asks for is
  the depth it runs. The rows themselves (12 pairs of 2 s, no other work, load 1.4–2.4; the
  VM ran 0.6× session 17's IOPS that hour): CPU/IO 1.07 / 1.02 / 1.07 at 4/1, 8/8, 32/32,
  intervals 0.99–1.16, 0.98–1.07, 1.03–1.17 (unresolved, unresolved, missed), control
  0.93–1.03, 0.96–1.06, 0.99–1.08; user time beyond ``t/io_uring``'s 0.054 / 0.048 / 0.027
  µs/IO (2.5 / 2.4 / 1.9 % of its CPU/IO). Profiles of 3 s runs at 32/32 (perf, 10 kHz, two
  pairs) put flashback's own code (the refill, recording each latency, the completion loop) at
  ~75 ns/IO against ``t/io_uring``'s ~35, and the kernel's per-I/O time within ±20 ns
  symbol by symbol, one pair each way (whole-run totals 2,203 against 2,111 ns/IO, then 1,684
  against 1,777): the expected excess is the ~40 ns of recording every I/O that ``-t0`` does
  not do, below what this VM's noise lets 12 pairs tell from 1.0.
  Session 20 ran the rows on the page-cached file too (``--target "page cache"``; ``-O0`` and
  ``direct=false``), where no worker is woken and the control is tighter: every run under
  ``perf stat``, which counts the kernel's posted completions (the tracepoint
  ``io_uring:io_uring_complete``: ``t/io_uring``'s I/Os, which nothing else counts there; it
  agreed with ``fb_run``'s own count to its timeout's 100 completions in 2 s) and each tool's CPU
  (``task-clock``). 8 pairs of 2 s, no other work, load 1.0–1.5: CPU/IO 1.09 / 1.04 / 1.06 at
  4/1, 8/8, 32/32, intervals 1.01–1.18, 1.01–1.08 (missed, missed) and 0.95–1.10 (unresolved),
  control 0.89–1.04, 0.96–1.01, 0.92–1.08; user time beyond ``t/io_uring``'s 0.014 / 0.026 /
  0.023 µs/IO (1.5 / 2.8 / 2.6 % of its CPU/IO), system time 0.87–1.05 µs/IO for every tool.
  The target is missed there by a few per cent: half of it flashback's user time (recording
  each latency, the permutation), the rest system time not told apart from noise in 8 pairs.
  Session 21 ran flashback on ``t/io_uring``'s offsets (``T_IO_URING_OFFSETS``), counted both
  tools' ``io_uring_enter`` calls (equal in every row: 0.2500 / 0.1250 / 0.0312–0.0313 per I/O)
  and added the sampled user share (:func:`user_share`), the part of the CPU this VM's noise
  does not hide: one run's share moves by ~0.3 points where the control's total moves by 5–10 %.
  Two changes in the engine cut it (default offsets; 4 runs before, 2 after, at each batch):
  4.2–4.8 → 3.7–4.0 % at 4/1, 3.5–3.6 → 3.1–3.4 % at 8/8, 2.8–3.1 → 2.8–2.9 % at 32/32
  (``t/io_uring`` 1.9–2.1, 1.5–1.6, 1.1–1.2 %; ``-t1`` 2.4–2.6, 1.6–1.8, 1.0–1.4 %):
  ``io_uring_enter`` as an inline ``syscall`` (the ``io-uring`` crate's ``direct-syscall``, as
  ``t/io_uring`` makes it) and each read/write entry pushed in its own arm (``sqe::push_rw``: built in one arm and
  pushed after the arms met, an entry went through a stack copy whose 16-byte load could not
  forward from the overlapping zeroing stores, half of ``State::push_ready``'s samples by
  ``perf annotate``). The permutation costs 0.4–0.6 points more than uniform offsets, and its
  system time was not told apart (24 pairs of 1 s at 32/32: CPU/IO uniform / permutation 1.02,
  90 % CI 0.98–1.08): its fuller coverage of the page cache is no dearer to read here. 8 pairs
  of 2 s, no other work, load 0.9–1.1: CPU/IO 1.00 / 1.00 / 0.98, intervals 0.94–1.07,
  0.96–1.10, 0.95–1.06 (unresolved), control 0.93–1.04, 0.94–0.99, 0.90–1.06; user share
  ``t/io_uring`` 2.5 / 1.8 / 1.2 %, flashback 4.4 / 3.5 / 2.3 %, which with the same kernel work
  per I/O is a CPU/IO ratio of 1.019 / 1.017 / 1.011. That excess is flashback's own per-I/O
  work beyond ``t/io_uring -t0``'s (which reads no clock and records nothing): the clock read
  per submitted batch and per completed one (13–15 % of flashback's user samples at 8/8), each
  latency into its histograms (~13 %), the slot and buffer bookkeeping.
  ``t/io_uring`` is built from fio's source at run
  time into a cache directory, never vendored: the source is ``$FIO_SRC`` (a fio checkout, or
  a git directory such as the one the ``fetch`` tool leaves in
  ``/work/.mirror/axboe+fio/repo``); without one the row is skipped with the reason printed.
* **128 KiB sequential writes** QD8, CPU per I/O against fio's default (one buffer filled once,
  scrambled per write) and ``--refill_buffers``; then the data flashback wrote is read back from
  the device: zlib and zstd ratios per 128 KiB block and a count of repeated 512-byte sectors.

``$FB_RUN_BASELINE`` may name an ``fb_run`` built from an earlier commit (or anything taking
its arguments and printing a run's meta; a ``cpu_s_run`` key there replaces ``wait4``'s CPU,
for a baseline hosted by an interpreter): it then runs in the same rotation ("before"), at the
default batch in the QD1 and write rows and with ``--batch S/C`` in each ``t/io_uring`` row, so
before/after come from the same minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import engine  # the loop device, prefill and child helpers
import numpy as np
import zstandard
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for support/ (a script)

from support import proc

HERE = Path(__file__).resolve().parent
FB_RUN = engine.FB_RUN
BASELINE = os.environ.get("FB_RUN_BASELINE")
MiB = 1 << 20
BATCHES = [(4, 1), (8, 8), (32, 32)]
DEFAULT_MIRROR = Path("/work/.mirror/axboe+fio/repo")


def load() -> str:
    return engine.load()


def cpu_ticks_by_pid() -> dict[int, tuple[int, int]]:
    """``pid: (parent pid, CPU clock ticks)`` of every user process now (kernel threads left
    out: the loop device's workers and softirq threads are mostly this bench's own I/O)."""
    return {
        pid: (p.ppid, p.cpu_ticks) for pid, p in proc.processes().items() if not p.kernel_thread
    }


def others_cpu_share(before: dict[int, tuple[int, int]], wall_s: float) -> float:
    """At least the share of the machine's CPUs (0–1) that user processes outside this one's
    tree (other work on the machine) used since the snapshot ``before`` (``cpu_ticks_by_pid``),
    ``wall_s`` ago; processes that started and ended in between are missed. The load average
    cannot tell: it lags a minute and counts this bench's own busy loops."""
    now = cpu_ticks_by_pid()
    mine, grew = {os.getpid()}, True
    while grew:
        kids = {p for p, (pp, _) in now.items() if pp in mine} - mine
        mine |= kids
        grew = bool(kids)
    ticks = sum(t - before.get(p, (0, 0))[1] for p, (_, t) in now.items() if p not in mine)
    return max(ticks, 0) / os.sysconf("SC_CLK_TCK") / wall_s / (os.cpu_count() or 1)


spawn_rusage = engine.spawn_rusage


def spawn(cmd: list[str]) -> tuple[str, float]:
    """Runs ``cmd`` to its end; its stdout and CPU seconds from ``wait4``."""
    out, ru = spawn_rusage(cmd)
    return out, ru.ru_utime + ru.ru_stime


def split_of(ru) -> dict:
    """User and system CPU seconds and voluntary / involuntary context switches of a run."""
    return {"ut_s": ru.ru_utime, "st_s": ru.ru_stime, "vcsw": ru.ru_nvcsw, "ivcsw": ru.ru_nivcsw}


def loop_reads(dev: str) -> int:
    """Reads the loop device ``dev`` has completed (:func:`engine.device_reads`)."""
    n = engine.device_reads(dev)
    if n is None:
        raise RuntimeError(f"{dev} has no block-device read counter in /sys/block")
    return n


def on_device(dev: str, run) -> dict:
    """``run()``'s result with ``ios`` replaced by the reads ``dev`` completed meanwhile: the
    same counter for every tool of a row (``t/io_uring`` prints only whole seconds' IOPS, and
    its first second, times the run time, was 0.54–1.60× what the device saw in 24 runs of
    2 s here, issue 29)."""
    before = loop_reads(dev)
    r = run()
    r["ios"] = loop_reads(dev) - before
    return r


def fb_cmd(exe: str, dev: str, fields: dict, time_s: float | None, batch=None) -> list[str]:
    """The ``fb_run`` command line: ``fields`` as ``key=value``, ``batch`` as ``--batch S/C``,
    ``time=`` unless ``time_s`` is None (a run of ``loops=`` in ``fields``)."""
    cmd = [exe, dev]
    if batch:
        cmd += ["--batch", f"{batch[0]}/{batch[1]}"]
    cmd += [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in fields.items()]
    if time_s is not None:
        cmd.append(f"time={time_s}s")
    return [*cmd, "engine=io_uring"]


def fb_run(
    exe: str, dev: str, fields: dict, time_s: float, batch=None, *, counted: bool = False
) -> dict:
    """One ``fb_run`` child: I/Os, duration, CPU s, p50 µs (of the first direction with I/O);
    ``counted``: under perf, its CPU counted as :func:`spawn_counted` counts ``t/io_uring``'s."""
    cmd = fb_cmd(exe, dev, fields, time_s, batch)
    enters = {}
    if counted:
        c = spawn_counted(cmd)
        out, ru, cpu_s, enters = c.out, c.ru, c.cpu_s, {"enters": c.enters}
    else:
        out, ru = spawn_rusage(cmd)
        cpu_s = ru.ru_utime + ru.ru_stime
    meta = json.loads(out.strip().splitlines()[-1])
    tot = meta["totals"]
    d = "read" if tot["read_ios"] else "write"
    return {
        "ios": tot["read_ios"] + tot["write_ios"],
        "duration_s": meta["duration_s"],
        # a baseline hosted by an interpreter reports the CPU of the run itself
        "cpu_s": meta.get("cpu_s_run", cpu_s),
        "p50_us": meta["latency"][d]["p50_us"],
        **split_of(ru),
        **enters,
    }


#: One ``fb.run`` as a user calls it from Python, in a fresh interpreter; prints the run's
#: I/Os, duration and p50.
FB_PY = """
import json, sys
import flashback as fb
dev, rw, bs, depth, time_s, session, cpus, direct = sys.argv[1:]
cap = fb.run(dev, fb.Workload(rw=rw, bs=bs, iodepth=int(depth), time=time_s + "s",
                              engine="io_uring", cpus_allowed=cpus or None,
                              direct=direct == "1"), session=session)
tot, d = cap.meta["totals"], "read" if cap.meta["totals"]["read_ios"] else "write"
print(json.dumps({"ios": tot["read_ios"] + tot["write_ios"], "duration_s": cap.meta["duration_s"],
                  "p50_us": cap.meta["latency"][d]["p50_us"]}))
"""


def fb_py(
    dev: str, fields: dict, time_s: float, *, session: str = "own", cpus: str | None = None
) -> dict:
    """One ``fb.run`` (the Python API, the engine as users run it) in a child interpreter: I/Os,
    duration, p50 µs. ``session``: ``fb.run``'s (``"own"``, the default: the job in a forked
    child of a session of its own, as fio's; ``"shared"``: on a thread of the interpreter).
    ``cpus``: its ``cpus_allowed``. No CPU: the child's includes the interpreter's start."""
    cmd = [sys.executable, "-c", FB_PY, dev, fields["rw"], fields["bs"], str(fields["iodepth"]),
           str(time_s), session, cpus or "", str(int(fields.get("direct", True)))]  # fmt: skip
    out, _ = spawn(cmd)
    return json.loads(out.strip().splitlines()[-1])


def fio(
    dev: str, fields: dict, time_s: float, *, refill: bool = False, cpus: str | None = None
) -> dict:
    """One fio run; ``cpus``: its ``--cpus_allowed``. ``fields["direct"]`` false: buffered, and
    the file's cached pages kept (``--invalidate=0``; fio drops them before a job by default,
    flashback never does)."""
    direct = fields.get("direct", True)
    cmd = [
        "fio", "--name=b", f"--filename={dev}", "--ioengine=io_uring", f"--rw={fields['rw']}",
        f"--bs={fields['bs']}", f"--iodepth={fields['iodepth']}", f"--direct={int(direct)}",
        f"--runtime={time_s}", "--time_based", "--output-format=json", "--lat_percentiles=1",
    ]  # fmt: skip
    if not direct:
        cmd.append("--invalidate=0")
    if refill:
        cmd.append("--refill_buffers")
    if cpus is not None:
        cmd.append(f"--cpus_allowed={cpus}")
    out, cpu_s = spawn(cmd)
    job = json.loads(out[out.index("{") :])["jobs"][0]
    d = "read" if job["read"]["total_ios"] else "write"
    lat = job[d]["lat_ns"]
    return {
        "ios": job[d]["total_ios"],
        "duration_s": job[d]["runtime"] / 1e3,
        "cpu_s": cpu_s,
        "p50_us": lat["percentile"]["50.000000"] / 1e3,
    }


def t_runtime(time_s: float) -> int:
    """``t/io_uring``'s run time in whole seconds: it prints IOPS once a second, so at least 2."""
    return max(2, round(time_s))


def t_cmd(
    exe: str, dev: str, batch: tuple[int, int], runtime_s: int, *, lat: bool = False,
    buffered: bool = False,
) -> list[str]:  # fmt: skip
    """The ``t/io_uring`` command line: QD32 4 KiB random reads at ``batch``, registered files,
    buffers and ring, no polling, for ``runtime_s`` whole seconds; ``lat``: ``-t1``;
    ``buffered``: ``-O0`` (``-O1``, ``O_DIRECT``, is its default)."""
    s, c = batch
    return [exe, "-d32", f"-s{s}", f"-c{c}", "-b4096", "-p0", "-B1", "-F1", "-X1",
            f"-t{int(lat)}", f"-r{runtime_s}", f"-O{int(not buffered)}", dev]  # fmt: skip


def t_io_uring(
    exe: str,
    dev: str,
    batch: tuple[int, int],
    time_s: float,
    *,
    lat: bool = False,
    buffered: bool = False,
) -> dict:
    """One ``t/io_uring`` run at ``batch``; ``lat``: with its latency tracking (``-t1``);
    ``buffered``: without ``O_DIRECT`` (``-O0``), its I/Os and CPU counted by perf
    (:func:`spawn_counted`), as it prints no count of its own and the device sees none."""
    runtime = t_runtime(time_s)
    cmd = t_cmd(exe, dev, batch, runtime, lat=lat, buffered=buffered)
    if buffered:
        c = spawn_counted(cmd)
        return {"ios": c.completions, "duration_s": runtime, "cpu_s": c.cpu_s,
                "enters": c.enters, **split_of(c.ru)}  # fmt: skip
    out, ru = spawn_rusage(cmd)
    return {"ios": engine.t_io_uring_ios(out, runtime), "duration_s": runtime,
            "cpu_s": ru.ru_utime + ru.ru_stime, **split_of(ru)}  # fmt: skip


#: What :func:`spawn_counted` has perf count: the program's CPU time (every thread), the
#: io_uring completions the kernel posts for it (a tracepoint, exact: ``t/io_uring``'s I/Os;
#: flashback's own count is its capture's, the same less its run's 20 ms timeout's) and its
#: ``io_uring_enter`` calls (a tracepoint: the rows' premise that both tools make the same
#: syscalls per I/O, checked on every run).
PERF_EVENTS = ("task-clock", "io_uring:io_uring_complete", "syscalls:sys_enter_io_uring_enter")


@dataclasses.dataclass(frozen=True)
class Counted:
    """One run under ``perf stat`` (:func:`spawn_counted`)."""

    out: str
    ru: resource.struct_rusage
    completions: int
    cpu_s: float
    enters: int


def perf_counts() -> str | None:
    """None if perf can count :data:`PERF_EVENTS` here, else why not."""
    try:
        p = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(PERF_EVENTS), "--", "true"],
                           capture_output=True, text=True)  # fmt: skip
    except FileNotFoundError:
        return "no perf (Debian's linux-perf; make bench installs it)"
    if p.returncode != 0 or "not supported" in p.stderr or "<not" in p.stderr:
        return f"perf cannot count {', '.join(PERF_EVENTS)} here: {p.stderr.strip()[:200]}"
    return None


def spawn_counted(cmd: list[str], *, tries: int = 2) -> Counted:
    """Runs ``cmd`` under ``perf stat``: its stdout, ``wait4``'s rusage (perf's own few ms
    included), the io_uring completions posted for it, its CPU seconds (``task-clock``) and its
    ``io_uring_enter`` calls. A run perf did not count (it printed ``<not counted>`` once in
    some 170 runs of 1 s here) is run again, ``tries`` times in all."""
    for _ in range(tries):
        with tempfile.TemporaryDirectory(prefix="flashback-perf-") as d:
            csv = Path(d) / "stat.csv"
            out, ru = spawn_rusage(["perf", "stat", "-x,", "-o", str(csv), "-e",
                                    ",".join(PERF_EVENTS), "--", *cmd])  # fmt: skip
            lines = [ln.split(",") for ln in csv.read_text().splitlines() if ln and ln[0] != "#"]
        got = {f[2]: f[0] for f in lines if len(f) > 2}
        if all(got.get(e, "").replace(".", "", 1).isdigit() for e in PERF_EVENTS):
            cpu, done, enters = (got[e] for e in PERF_EVENTS)
            return Counted(out, ru, int(done), float(cpu) / 1e3, int(enters))
    raise RuntimeError(f"perf did not count {', '.join(PERF_EVENTS)} for {cmd[0]}: {got}")


def iops(r: dict) -> float:
    return r["ios"] / r["duration_s"]


def cpu_us(r: dict) -> float:
    return r["cpu_s"] / max(r["ios"], 1) * 1e6


def p50(r: dict) -> float:
    return r["p50_us"]


def pair_ratios(a: list[dict], b: list[dict], of) -> list[float]:
    """``of(a[i]) / of(b[i])`` for each pair."""
    return [of(x) / of(y) for x, y in zip(a, b, strict=True)]


def spread(r: list[float]) -> tuple[float, float, float]:
    """Median, min, max of the pair ratios ``r``."""
    return statistics.median(r), min(r), max(r)


def ratio(a: list[dict], b: list[dict], of) -> tuple[float, float, float]:
    """Median, min, max over the pairs of ``of(a[i]) / of(b[i])``."""
    return spread(pair_ratios(a, b, of))


#: The confidence of a QD1 verdict: a percentile bootstrap interval of the median pair ratio
#: (the pairs resampled; fixed resampling seed, so a printed verdict is reproducible from its runs).
CONFIDENCE = 0.90


def median_ci(r: list[float]) -> tuple[float, float]:
    """The ``CONFIDENCE`` bootstrap interval of the median of ``r`` (its range under 3 values)."""
    if len(r) < 3:
        return min(r), max(r)
    ci = stats.bootstrap((np.asarray(r),), np.median, confidence_level=CONFIDENCE,
                         method="percentile", n_resamples=4000, random_state=0).confidence_interval  # fmt: skip
    return float(ci.low), float(ci.high)


def judged(
    r: list[float], *, at_least: float | None = None, at_most: float | None = None
) -> tuple[float, float, str]:
    """Whether the median pair ratio meets its target, judged on its bootstrap interval:
    (low, high, word), the word "met" when the whole interval is on the target's side
    (``≥ at_least`` or ``≤ at_most``), "missed" when all of it is beyond, "unresolved" when it
    straddles the target (more pairs, or a quieter machine, would be needed to tell)."""
    lo, hi = median_ci(r)
    if at_least is not None:
        met, missed = lo >= at_least, hi < at_least
    else:
        met, missed = hi <= at_most, lo > at_most
    return lo, hi, "met" if met else "missed" if missed else "unresolved"


def ci_text(lo: float, hi: float, word: str) -> str:
    return f"{CONFIDENCE:.0%} CI {lo:.2f}–{hi:.2f} {word}"


def verdict(r: list[float], *, at_least: float | None = None, at_most: float | None = None) -> str:
    """:func:`judged` as a line's text."""
    return ci_text(*judged(r, at_least=at_least, at_most=at_most))


#: The QD1 targets (issue 29): IOPS at least 0.95 of fio's, p50 at most 1.05 of fio's.
QD1_IOPS_AT_LEAST, QD1_P50_AT_MOST = 0.95, 1.05

#: The ``t/io_uring`` rows' target (issue 29): CPU per I/O at most ``t/io_uring``'s.
RING_CPU_AT_MOST = 1.0

#: The fewest pairs a ``t/io_uring`` row's verdict stands on (issue 29: at least 8): under 3 the
#: "interval" is the pairs' range, and 2 pairs of 1 s here gave "met" while ``t/io_uring``
#: against itself ranged 0.83–1.01.
RING_MIN_PAIRS = 8


def ring_verdict(fb: list[float], control: list[float]) -> str:
    """The ``t/io_uring`` rows' verdict on flashback's pair ratios ``fb`` (CPU/IO, flashback /
    ``t/io_uring``), as a line's text: :func:`judged` against :data:`RING_CPU_AT_MOST`, standing
    only where the rotation can tell, with at least :data:`RING_MIN_PAIRS` pairs and a control
    (``t/io_uring`` against itself, ``control``) whose interval holds 1, so that the rotation
    does not tell one tool from itself; elsewhere "no verdict", whatever flashback's interval."""
    lo, hi, word = judged(fb, at_most=RING_CPU_AT_MOST)
    c_lo, c_hi = median_ci(control)
    if len(fb) < RING_MIN_PAIRS:
        word = f"no verdict ({len(fb)} pairs: {RING_MIN_PAIRS} at least)"
    elif not c_lo <= 1.0 <= c_hi:
        word = f"no verdict (the control's interval {c_lo:.2f}–{c_hi:.2f} does not hold 1)"
    return ci_text(lo, hi, word)


def rotate(tools: dict, pairs: int) -> dict[str, list[dict]]:
    """Runs every tool once per pair, the order reversed every other pair."""
    names = list(tools)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for i in range(pairs):
        for n in names if i % 2 == 0 else names[::-1]:
            runs[n].append(tools[n]())
    return runs


def summarize(runs: dict[str, list[dict]], anchor: str, of: dict) -> dict:
    """For each ``name: metric`` of ``of``: the median of flashback's runs and of the anchor's
    (``fb_<name>``, ``<anchor>_<name>``) and the per-pair ratio flashback / anchor
    (``<name without _us>_ratio``: median, min, max)."""
    row: dict = {}
    for name, metric in of.items():
        for tool in (anchor, "fb"):
            row[f"{tool}_{name}"] = statistics.median(map(metric, runs[tool]))
        row[f"{name.removesuffix('_us')}_ratio"] = ratio(runs["fb"], runs[anchor], metric)
    return row


def fmt(t: tuple[float, float, float]) -> str:
    return f"{t[0]:.2f} ({t[1]:.2f}–{t[2]:.2f})"


def busy_loops(*, own_session: bool) -> list[subprocess.Popen]:
    """One ``nice -n 19`` busy loop per CPU; ``own_session``: in a session (so a scheduler
    autogroup) of their own, as other work on a machine is, else in this process's."""
    return [
        subprocess.Popen(
            ["nice", "-n", "19", "sh", "-c", "while :; do :; done"], start_new_session=own_session
        )
        for _ in range(os.cpu_count() or 1)
    ]


#: The QD1 rows' regimes: the busy loops' session (None: no busy loops). In the tools' session
#: the loops share the scheduler autogroup of every tool but the jobs of fio and ``fb.run``,
#: which leave it (``setsid()`` in fio's ``thread_main`` for a forked job; ``fb.run``'s default
#: ``session="own"``); there ``fb_shared`` runs ``fb.run(session="shared")`` as well, the job
#: on a thread of the interpreter, in the loops' autogroup.
#: "pinned": no loops, each tool's job on the same one CPU by its own option (``cpus_allowed``,
#: the same name in both), which takes the scheduler's placement draw out of the ratio.
REGIMES = {
    "quiet": None,
    "quiet, both pinned to one CPU": "pinned",
    "loaded": "own",
    "loaded, loops in the tools' session": "tools",
}


def against_fio(row: dict, runs: dict[str, list[dict]], tool: str, prefix: str) -> str:
    """``tool``'s runs against fio's in the same rotation: stores ``{prefix}_iops_ratio`` and
    ``{prefix}_p50_ratio`` in ``row`` and returns them as a line's text."""
    row[f"{prefix}_iops_ratio"] = ratio(runs[tool], runs["fio"], iops)
    row[f"{prefix}_p50_ratio"] = ratio(runs[tool], runs["fio"], p50)
    return (
        f"IOPS ratio {fmt(row[f'{prefix}_iops_ratio'])} p50 ratio {fmt(row[f'{prefix}_p50_ratio'])}"
        f" | {verdicts(row, runs, tool, prefix)}"
    )


def verdicts(row: dict, runs: dict[str, list[dict]], tool: str, prefix: str) -> str:
    """``tool``'s QD1 verdicts against fio (stored as ``{prefix}_iops_verdict`` and
    ``{prefix}_p50_verdict``), as a line's text. A verdict stands only where the rotation can
    tell: where the control (fio against itself, ``fio_again``) meets the same target; elsewhere
    the word is "no verdict", whatever the interval (in a regime of 0.02–78× swings flashback's
    interval can land on either side of a target by chance, issue 29, session 18)."""
    out = []
    for name, of, side in (("iops", iops, "at_least"), ("p50", p50, "at_most")):
        target = {side: QD1_IOPS_AT_LEAST if side == "at_least" else QD1_P50_AT_MOST}
        lo, hi, word = judged(pair_ratios(runs[tool], runs["fio"], of), **target)
        if tool != "fio_again":
            control = judged(pair_ratios(runs["fio_again"], runs["fio"], of), **target)[2]
            if control != "met":
                word = "no verdict (the control's is not met)"
        v = ci_text(lo, hi, word)
        row[f"{prefix}_{name}_verdict"] = v
        out.append(f"{'IOPS' if name == 'iops' else 'p50'} {v}")
    return ", ".join(out)


#: Where the QD1 and ``t/io_uring`` rows read: ``name: (direct I/O, QD1 regimes run there by
#: default)``; the reads that are not direct are of a page-cached file. On the loop
#: device every read is handed to the loop device's worker, whose CPU the scheduler draws (the
#: module's docstring); in the page cache (``engine.page_cached_file``) each read is done inside
#: the enter that submits it, no other thread is woken, and the rows are the engines' own cost:
#: the placement regimes ("pinned", loops in the tools' session) have nothing to draw there.
TARGETS = {
    "loop device": (True, list(REGIMES)),
    "page cache": (False, ["quiet", "loaded"]),
}

#: Size of the page-cached file the QD1 rows read.
PAGE_CACHE_SIZE = 64 * MiB


def qd1(
    dev: str,
    time_s: float,
    pairs: int,
    *,
    regimes: list[str] | None = None,
    target: str = "loop device",
) -> list[dict]:
    """The QD1 rows on ``dev``, one per regime of ``REGIMES`` (``regimes``: only those;
    default: ``target``'s in ``TARGETS``, which also says whether the reads are direct)."""
    direct, default_regimes = TARGETS[target]
    regimes = regimes or default_regimes
    fields = {"rw": "randread", "bs": "4k", "iodepth": 1, "direct": direct}
    rows = []
    for regime, loops_session in REGIMES.items():
        if regime not in regimes:
            continue
        pinned = loops_session == "pinned"
        loops = busy_loops(own_session=loops_session == "own") if loops_session in (
            "own", "tools") else []  # fmt: skip
        cpus = str(max(os.sched_getaffinity(0))) if pinned else None
        try:
            tools = {
                "fio": lambda c=cpus: fio(dev, fields, time_s, cpus=c),
                "fb": lambda c=cpus: fb_py(dev, fields, time_s, cpus=c),
                # the control: fio against itself in the same rotation
                "fio_again": lambda c=cpus: fio(dev, fields, time_s, cpus=c),
            }
            if loops_session == "tools":
                tools["fb_shared"] = lambda: fb_py(dev, fields, time_s, session="shared")
            if BASELINE:
                tools["before"] = lambda: fb_run(BASELINE, dev, fields, time_s)
            t0, ticks0 = time.monotonic(), cpu_ticks_by_pid()
            runs = rotate(tools, pairs)
            others = others_cpu_share(ticks0, time.monotonic() - t0)
            la = f"{load()}, other work ≥ {others:.0%} of the CPUs"
        finally:
            for p in loops:
                p.kill()
                p.wait()
        row = {"target": target, "regime": regime, "pairs": pairs, "load": la,
               "other_work_cpu_share": others,
               **summarize(runs, "fio", {"iops": iops, "p50_us": p50})}  # fmt: skip
        line = (
            f"QD1 4k randread, {target}, {regime}: fio {row['fio_iops']:7.0f} IOPS p50 "
            f"{row['fio_p50_us']:5.2f} µs | fb.run {row['fb_iops']:7.0f} IOPS p50 "
            f"{row['fb_p50_us']:5.2f} µs | IOPS ratio {fmt(row['iops_ratio'])} p50 ratio "
            f"{fmt(row['p50_ratio'])} (targets ≥ {QD1_IOPS_AT_LEAST}, ≤ {QD1_P50_AT_MOST}) | "
            f"{verdicts(row, runs, 'fb', 'fb')}"
        )
        if BASELINE:
            line += f" | before: {against_fio(row, runs, 'before', 'before')}"
        print(f"{line}; {la}", flush=True)
        print(
            f"  control, fio against itself: {against_fio(row, runs, 'fio_again', 'control')}",
            flush=True,
        )
        if "fb_shared" in runs:
            shared = against_fio(row, runs, "fb_shared", "shared")
            print(f"  fb.run(session='shared'), the job in the loops' autogroup: {shared}",
                  flush=True)  # fmt: skip
        row.update(modes(runs))
        print(f"  {modes_line(row)}", flush=True)
        rows.append(row)
    return rows


#: A QD1 run whose p50 is over this many times the smallest p50 of its row (either tool) is
#: counted as split across CPUs: on this VM the two modes sit about 10× apart (4–9 µs with the
#: loop device's worker on the tool's CPU, 37–60 µs with every wake-up crossing CPUs).
SPLIT_X = 3.0


def modes(runs: dict[str, list[dict]]) -> dict:
    """Which QD1 runs were split across CPUs (see ``SPLIT_X``), per tool, and the ratios
    flashback / fio over the pairs where neither was: the engine's own cost, apart from where
    the scheduler put the loop device's worker."""
    floor = min(p50(r) for n in ("fio", "fb") for r in runs[n])
    split = {n: [p50(r) > SPLIT_X * floor for r in v] for n, v in runs.items()}
    both = [(b, a) for b, a, sb, sa in zip(runs["fb"], runs["fio"], split["fb"], split["fio"],
                                           strict=True) if not (sb or sa)]  # fmt: skip
    out: dict = {f"split_{n}": sum(v) for n, v in split.items()}
    out["shared_pairs"] = len(both)
    if both:
        fb_runs, fio_runs = [b for b, _ in both], [a for _, a in both]
        out["shared_p50_ratio"] = ratio(fb_runs, fio_runs, p50)
        out["shared_iops_ratio"] = ratio(fb_runs, fio_runs, iops)
    return out


def modes_line(row: dict) -> str:
    n = row["pairs"]
    label = {"fio": "fio", "fio_again": "fio again", "fb": "fb.run", "fb_shared": "fb.run "
             "session='shared'", "before": "before"}  # fmt: skip
    counts = ", ".join(f"{label[k[6:]]} {v}/{n}" for k, v in row.items()
                       if k.startswith("split_"))  # fmt: skip
    head = f"runs split across CPUs: {counts}"
    if not row["shared_pairs"]:
        return f"{head}; no pair with both on one CPU"
    return (
        f"{head}; the {row['shared_pairs']} pairs with both on one CPU: p50 ratio "
        f"{fmt(row['shared_p50_ratio'])}, IOPS ratio {fmt(row['shared_iops_ratio'])}"
    )


def git_dir_commit(src: Path) -> tuple[str, bool] | None:
    """(commit, is a bare git directory) of a fio source, or None if it is not git."""
    for args in (["--git-dir", str(src)], ["-C", str(src)]):
        p = subprocess.run(["git", *args, "rev-parse", "HEAD"], capture_output=True, text=True)
        if p.returncode == 0:
            return p.stdout.strip(), args[0] == "--git-dir"
    return None


def build_t_io_uring() -> tuple[str | None, str]:
    """Builds ``t/io_uring`` from ``$FIO_SRC`` (else the fetched mirror) into a cache
    directory, for a generic x86-64 (``--disable-native``: flashback's Rust is not built for the
    host CPU either, and valgrind cannot run the AVX-512 ``-march=native`` may emit); (the
    binary, how) or (None, why not)."""
    src = Path(os.environ.get("FIO_SRC") or DEFAULT_MIRROR)
    if not src.exists():
        return None, f"no fio source at {src} (set FIO_SRC to a fio checkout)"
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flashback-bench"
    git = git_dir_commit(src)
    tag = git[0][:12] if git else hashlib.sha256(str(src).encode()).hexdigest()[:12]
    tree = cache / f"fio-{tag}-generic"
    exe = tree / "t" / "io_uring"
    if exe.exists():
        return str(exe), f"cached build of fio {tag}"
    tree.mkdir(parents=True, exist_ok=True)
    if git and git[1]:
        archive = subprocess.run(
            ["git", "--git-dir", str(src), "archive", "HEAD"], capture_output=True, check=False
        )
        if archive.returncode != 0:
            return None, f"git archive of {src} failed"
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    else:
        subprocess.run(["cp", "-a", f"{src}/.", str(tree)], check=True)
    for step in (["./configure", "--disable-native"], ["make", "-j2", "t/io_uring"]):
        p = subprocess.run(["nice", *step], cwd=tree, capture_output=True, text=True)
        if p.returncode != 0:
            return None, f"{' '.join(step)} failed in {tree}: {p.stderr.strip()[-200:]}"
    return str(exe), f"built from fio {tag} in {tree}"


def ring_cost(dev: str, time_s: float, pairs: int, *, target: str = "loop device") -> list[dict]:
    """The ``t/io_uring`` rows on ``dev``, one per batch of ``BATCHES``. ``target`` "page
    cache": ``dev`` is a page-cached file (``engine.page_cached_file``), read buffered by both
    tools, each run counted by perf (:func:`spawn_counted`); else a loop device, whose read
    counter counts every tool's I/Os (:func:`on_device`)."""
    exe, how = build_t_io_uring()
    if exe is None:
        print(f"t/io_uring rows skipped: {how}", flush=True)
        return []
    cached = not TARGETS[target][0]
    if cached and (why := perf_counts()):
        print(f"t/io_uring rows on the page cache skipped: {why}", flush=True)
        return []
    print(f"t/io_uring on the {target}: {how}", flush=True)
    fields = {"rw": "randread", "bs": "4k", "iodepth": 32, "direct": not cached,
              **T_IO_URING_OFFSETS}  # fmt: skip
    rows = []
    for batch in BATCHES:
        tools = {
            "t": lambda b=batch: t_io_uring(exe, dev, b, time_s, buffered=cached),
            "tlat": lambda b=batch: t_io_uring(exe, dev, b, time_s, lat=True, buffered=cached),
            "fb": lambda b=batch: fb_run(str(FB_RUN), dev, fields, time_s, b, counted=cached),
            # the control: t/io_uring against itself, what the rotation's noise alone gives
            "t2": lambda b=batch: t_io_uring(exe, dev, b, time_s, buffered=cached),
        }
        if BASELINE:
            tools["before"] = lambda b=batch: fb_run(BASELINE, dev, fields, time_s, b,
                                                     counted=cached)  # fmt: skip
        # a run of 1 ms: start-up and report, paid in the rotation's conditions
        tools["fb_start"] = lambda b=batch: fb_run(str(FB_RUN), dev, fields, 0.001, b,
                                                   counted=cached)  # fmt: skip
        if not cached:
            # every tool's I/Os as the device counted them
            tools = {n: lambda f=f: on_device(dev, f) for n, f in tools.items()}
        runs = rotate(tools, pairs)
        start = runs.pop("fb_start")
        la = load()
        row = {"target": target, "batch": list(batch), "pairs": pairs, "load": la,
               **summarize(runs, "t", {"cpu_us": cpu_us, "iops": iops})}  # fmt: skip
        row["tlat_cpu_ratio"] = ratio(runs["fb"], runs["tlat"], cpu_us)
        control = pair_ratios(runs["t2"], runs["t"], cpu_us)
        row["cpu_verdict"] = ring_verdict(pair_ratios(runs["fb"], runs["t"], cpu_us), control)
        row["control_cpu_ratio"] = spread(control)
        row["control_cpu_ci"] = median_ci(control)
        line = (
            f"4k randread QD32 -s{batch[0]} -c{batch[1]}, {target}: t/io_uring {row['t_iops']:7.0f} IOPS "
            f"{row['t_cpu_us']:5.2f} µs/IO | flashback {row['fb_iops']:7.0f} IOPS "
            f"{row['fb_cpu_us']:5.2f} µs/IO | CPU/IO ratio {fmt(row['cpu_ratio'])} (target "
            f"≤ {RING_CPU_AT_MOST}: {row['cpu_verdict']}) IOPS ratio {fmt(row['iops_ratio'])} | "
            f"control, t/io_uring against itself: CPU/IO ratio {fmt(row['control_cpu_ratio'])}, "
            f"{CONFIDENCE:.0%} CI {row['control_cpu_ci'][0]:.2f}–{row['control_cpu_ci'][1]:.2f} | "
            f"against t/io_uring -t1 (latency tracking) CPU/IO ratio {fmt(row['tlat_cpu_ratio'])}"
        )
        if "before" in runs:
            row["before_cpu_ratio"] = ratio(runs["before"], runs["t"], cpu_us)
            line += f" | before: CPU/IO ratio {fmt(row['before_cpu_ratio'])}"
        print(f"{line}; {la}", flush=True)
        row["split"] = {n: split_row(rs) for n, rs in runs.items()}
        print("  " + " | ".join(f"{n}: {split_line(v)}" for n, v in row["split"].items()),
              flush=True)  # fmt: skip
        row.update(user_excess(runs["fb"], runs["t"]))
        print(f"  {user_excess_line(row)}", flush=True)
        row.update(start_cost(start, runs["fb"]))
        print(f"  {start_line(row, time_s)}", flush=True)
        if cached:
            row["user_share"] = {
                "t": user_share(t_cmd(exe, dev, batch, t_runtime(time_s), buffered=True)),
                "tlat": user_share(
                    t_cmd(exe, dev, batch, t_runtime(time_s), lat=True, buffered=True)
                ),
                "fb": user_share(fb_cmd(str(FB_RUN), dev, fields, time_s, batch)),
            }
            print(f"  {user_share_line(row['user_share'])}", flush=True)
        rows.append(row)
    return rows


#: The offsets the ``t/io_uring`` rows' flashback draws: each independently and uniformly over
#: the target, as ``t/io_uring`` does (``get_offset``: ``__rand64() % max_blocks``), not
#: flashback's default permutation (every block once per pass, as fio's random map), so both
#: tools run one workload. The permutation's own cost, measured in session 21 (issue 29): 0.4–0.6
#: points more of the CPU samples in user space at 4/1, 8/8, 32/32, and no difference in system
#: time resolved (24 pairs of 1 s at 32/32: CPU/IO uniform / permutation 1.02, 90 % CI 0.98–1.08).
T_IO_URING_OFFSETS = {"random": "uniform"}

#: The sampling rate of :func:`user_share` (Hz of CPU time).
SHARE_HZ = 20_000


def user_share(cmd: list[str]) -> float:
    """The share of ``cmd``'s CPU samples taken in user space (``perf record -e cpu-clock`` at
    :data:`SHARE_HZ`, every thread; perf's data in a temporary directory of this bench's own in
    RAM, removed after): some 40,000 samples a 2 s run, so a share to a tenth of a point, where
    ``wait4``'s user time moves by whole points run to run on this VM."""
    with tempfile.TemporaryDirectory(prefix="flashback-share-", dir=engine.ram_dir()) as d:
        data = str(Path(d) / "perf.data")
        spawn_rusage(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(SHARE_HZ), "-o", data,
                      "--", *cmd])  # fmt: skip
        p = subprocess.run(["perf", "report", "-i", data, "--stdio", "-q", "--sort", "dso"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    shares = {}
    for ln in p.stdout.splitlines():
        pct, _, dso = ln.strip().partition("%")
        try:
            shares[dso.strip()] = float(pct) / 100
        except ValueError:
            continue
    # the shares are of every sample: a report that does not add up to them is not read
    if not 0.98 <= sum(shares.values()) <= 1.02:
        raise RuntimeError(
            f"perf's report of {Path(cmd[0]).name} does not add up to its samples "
            f"({sum(shares.values()):.1%}): {p.stdout[:200]!r} {p.stderr[:200]!r}"
        )
    return sum(v for k, v in shares.items() if not k.startswith("[kernel"))


def user_share_line(share: dict[str, float]) -> str:
    """The user shares, and the CPU/IO ratio they imply if both tools' kernel work per I/O is
    the same (the same syscalls per I/O into the same kernel code, as perf's profiles show):
    ``(1 − t's share) / (1 − flashback's)``."""
    implied = (1 - share["t"]) / (1 - share["fb"])
    return (
        f"user share of CPU samples (perf, {SHARE_HZ // 1000} kHz, one run each): t/io_uring "
        f"{share['t']:.2%}, -t1 {share['tlat']:.2%}, flashback {share['fb']:.2%}; with the same "
        f"kernel work per I/O that is a CPU/IO ratio of {implied:.3f}"
    )


def user_excess(fb: list[dict], t: list[dict]) -> dict:
    """flashback's user CPU per I/O beyond ``t/io_uring``'s, per pair (µs), and that excess as
    a share of ``t/io_uring``'s whole CPU per I/O: the part of the CPU ratio the engine's own
    code decides (both tools' system time is the same kernel's work), medians over the pairs."""
    per_io = [
        (f["ut_s"] / f["ios"] - x["ut_s"] / x["ios"]) * 1e6 for f, x in zip(fb, t, strict=True)
    ]
    share = [d / cpu_us(x) for d, x in zip(per_io, t, strict=True)]
    return {
        "user_excess_us": statistics.median(per_io),
        "user_excess_share": statistics.median(share),
    }


def user_excess_line(row: dict) -> str:
    return (
        f"flashback's user time beyond t/io_uring's: {row['user_excess_us']:.3f} µs/IO, "
        f"{row['user_excess_share']:.1%} of t/io_uring's CPU/IO"
    )


def start_cost(start: list[dict], full: list[dict]) -> dict:
    """What a ``time=1ms`` run of ``fb_run`` costs in the rotation (start-up, set-up and the
    report, each run following the other tools' runs): its median CPU in ms with the range, and
    the median per pair of its share of a full run's CPU."""
    ms = [r["cpu_s"] * 1e3 for r in start]
    share = [s["cpu_s"] / f["cpu_s"] for s, f in zip(start, full, strict=True)]
    return {"fb_start_ms": (statistics.median(ms), min(ms), max(ms)),
            "fb_start_share": statistics.median(share)}  # fmt: skip


def start_line(row: dict, time_s: float) -> str:
    return (
        f"fb_run start-up and report (a time=1ms run in the rotation): "
        f"{fmt(row['fb_start_ms'])} ms CPU, {row['fb_start_share']:.1%} of a {time_s:g} s run's"
    )


def split_row(runs: list[dict]) -> dict:
    """Medians over a tool's runs of user and system CPU µs per I/O and of voluntary and
    involuntary context switches per 1,000 I/Os."""
    med = statistics.median
    return {
        "ut_us": med(r["ut_s"] / r["ios"] * 1e6 for r in runs),
        "st_us": med(r["st_s"] / r["ios"] * 1e6 for r in runs),
        "vcsw_k": med(r["vcsw"] / r["ios"] * 1e3 for r in runs),
        "ivcsw_k": med(r["ivcsw"] / r["ios"] * 1e3 for r in runs),
        # counted by perf (the page-cache rows)
        **({"enters_io": med(r["enters"] / r["ios"] for r in runs)} if "enters" in runs[0] else {}),
    }


def split_line(v: dict) -> str:
    return (
        f"user {v['ut_us']:.3f} sys {v['st_us']:.3f} µs/IO, switches {v['vcsw_k']:.1f} + "
        f"{v['ivcsw_k']:.1f} forced per 1k IO"
        + (f", {v['enters_io']:.4f} enters/IO" if "enters_io" in v else "")
    )


def check_written(dev: str, span: int, bs: int = 128 << 10) -> dict:
    """Reads back ``span`` bytes of ``dev``: zlib (level 6) and zstd (level 3) ratio per
    ``bs`` block (compressed / raw, the smallest), and the 512-byte sectors seen twice."""
    seen: set[bytes] = set()
    repeats = 0
    z_min = zs_min = 1e9
    cctx = zstandard.ZstdCompressor(level=3)
    with open(dev, "rb", buffering=0) as f:
        for off in range(0, span, bs):
            block = os.pread(f.fileno(), bs, off)
            z_min = min(z_min, len(zlib.compress(block, 6)) / len(block))
            zs_min = min(zs_min, len(cctx.compress(block)) / len(block))
            for s in range(0, len(block), 512):
                h = hashlib.blake2b(block[s : s + 512], digest_size=16).digest()
                repeats += h in seen
                seen.add(h)
    return {"sectors": len(seen) + repeats, "repeated_sectors": repeats,
            "zlib_ratio_min": z_min, "zstd_ratio_min": zs_min}  # fmt: skip


def write_cost(dev: str, size: int, time_s: float, pairs: int) -> dict:
    fields = {"rw": "write", "bs": "128k", "iodepth": 8}
    tools = {
        "fio": lambda: fio(dev, fields, time_s),
        "refill": lambda: fio(dev, fields, time_s, refill=True),
        "fb": lambda: fb_run(str(FB_RUN), dev, fields, time_s),
    }
    if BASELINE:
        tools["before"] = lambda: fb_run(BASELINE, dev, fields, time_s)
    runs = rotate(tools, pairs)
    la = load()
    row = {
        "pairs": pairs, "load": la,
        "fio_cpu_us": statistics.median(map(cpu_us, runs["fio"])),
        "fb_cpu_us": statistics.median(map(cpu_us, runs["fb"])),
        "cpu_ratio": ratio(runs["fb"], runs["fio"], cpu_us),
        "refill_cpu_ratio": ratio(runs["fb"], runs["refill"], cpu_us),
        "iops_ratio": ratio(runs["fb"], runs["fio"], iops),
    }  # fmt: skip
    line = (
        f"128k write QD8: fio {row['fio_cpu_us']:5.2f} µs/IO | flashback "
        f"{row['fb_cpu_us']:5.2f} µs/IO | CPU/IO ratio vs fio's default "
        f"{fmt(row['cpu_ratio'])} (target ≤ 1.0), vs --refill_buffers "
        f"{fmt(row['refill_cpu_ratio'])}; IOPS ratio {fmt(row['iops_ratio'])}"
    )
    if BASELINE:
        row["before_cpu_ratio"] = ratio(runs["before"], runs["fio"], cpu_us)
        line += f" | before: CPU/IO ratio vs fio's default {fmt(row['before_cpu_ratio'])}"
    print(f"{line}; {la}", flush=True)
    # one pass over the device, then what it holds
    subprocess.run([str(FB_RUN), dev, *[f"{k}={v}" for k, v in fields.items()], "loops=1"],
                   check=True, capture_output=True)  # fmt: skip
    row["written"] = check_written(dev, size)
    w = row["written"]
    print(
        f"128k write QD8, data read back ({size >> 20} MiB, one pass): smallest ratio per 128 KiB "
        f"block zlib {w['zlib_ratio_min']:.4f}, zstd {w['zstd_ratio_min']:.4f}; 512-byte sectors "
        f"repeated: {w['repeated_sectors']} of {w['sectors']}",
        flush=True,
    )
    return row


def main(*, time_s: float = 2.0, pairs: int = 8, size: int = 64 * MiB) -> dict:
    print(
        f"\n== io_uring engine: QD1, t/io_uring, write data ({pairs} pairs of {time_s} s; {load()})"
    )
    if os.geteuid() != 0:
        print("not root: no loop device, engine ring rows skipped")
        return {}
    if not FB_RUN.exists():
        print(f"{FB_RUN} is missing (make bench builds it): engine ring rows skipped")
        return {}
    out: dict = {"time_s": time_s, "pairs": pairs}
    with engine.loop_device(size) as dev:
        out["qd1"] = qd1(dev, time_s, pairs)
        out["t_io_uring"] = ring_cost(dev, time_s, pairs)
        out["write"] = write_cost(dev, size, time_s, pairs)
    with engine.page_cached_file(PAGE_CACHE_SIZE) as path:
        out["qd1_page_cache"] = qd1(path, time_s, pairs, target="page cache")
        out["t_io_uring_page_cache"] = ring_cost(path, time_s, pairs, target="page cache")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-s", type=float, default=2.0, help="seconds per run")
    ap.add_argument("--pairs", type=int, default=8, help="runs per tool and row")
    ap.add_argument("--only", choices=["qd1", "ring", "write"], help="one group of rows")
    ap.add_argument("--regime", action="append", choices=list(REGIMES),
                    help="with --only qd1: this regime (repeatable; default all)")  # fmt: skip
    ap.add_argument("--target", choices=list(TARGETS), default="loop device",
                    help="with --only qd1 or ring: where the reads go")  # fmt: skip
    a = ap.parse_args()
    if a.only in ("qd1", "ring") and not TARGETS[a.target][0]:
        with engine.page_cached_file(PAGE_CACHE_SIZE) as path:
            if a.only == "qd1":
                qd1(path, a.time_s, a.pairs, regimes=a.regime, target=a.target)
            else:
                ring_cost(path, a.time_s, a.pairs, target=a.target)
    elif a.only:
        with engine.loop_device(64 * MiB) as dev:
            {"qd1": lambda: qd1(dev, a.time_s, a.pairs, regimes=a.regime),
             "ring": lambda: ring_cost(dev, a.time_s, a.pairs),
             "write": lambda: write_cost(dev, 64 * MiB, a.time_s, a.pairs)}[a.only]()  # fmt: skip
    else:
        main(time_s=a.time_s, pairs=a.pairs)
    sys.exit(0)
