/** Is the load client the bottleneck? One process's readings, judged. */

/**
 * Was the load client the bottleneck? Busy (event loop > 90 % utilised) *and* using its CPU (> 60 % of
 * a core per thread), or using > 90 % per thread: `saturated`, these numbers may measure h2lab. An
 * event loop that is busy without getting the CPU was starved by other processes on the machine: not
 * saturated, but said, because such numbers measure the machine's contention. With the embedded
 * fixture server the process CPU includes the server's thread, so only the event loop can say.
 */
export function judgeClient(
  elu: number,
  cpu: number,
  workers: number,
  cpus: number,
  loadAverage: number,
  cpuIncludesServer = false,
): { saturated: boolean; note?: string } {
  const threads = Math.max(1, Math.min(workers, cpus));
  const perThread = cpu / threads;
  const loop = `event loop ${(elu * 100).toFixed(0)}% utilised, ${cpu.toFixed(2)} CPU cores${cpuIncludesServer ? ' with the embedded server' : ''}`;
  // With the server's thread in the process CPU, only the event loop can say.
  const busy = cpuIncludesServer ? elu > 0.9 : perThread > 0.9 || (elu > 0.9 && perThread > 0.6);
  if (busy) {
    const more = workers < cpus ? `; try --workers ${Math.min(cpus, workers * 2)}` : '';
    return {
      saturated: true,
      note: `the load client was busy (${loop}): these numbers may measure h2lab rather than the server${more}`,
    };
  }
  if (cpuIncludesServer) return { saturated: false };
  if (elu > 0.9) {
    return {
      saturated: false,
      note: `the load client had work but not the CPU (${loop}, load average ${loadAverage.toFixed(1)} on ${cpus} cores): other processes on this machine slowed it down, so these numbers carry their noise; rerun on a quieter machine`,
    };
  }
  return { saturated: false };
}
