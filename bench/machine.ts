import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  kernel: string;
}

export function describeMachine(): Machine {
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
  };
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): [number, number, number] {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  return [one, five, fifteen].map((value) => Math.round(value * 100) / 100) as [number, number, number];
}

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/** CPU time (user + system) of a process in ms, from /proc; undefined where /proc is not available. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return ((user + system) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Children of this process whose command line contains `needle` (e.g. the Temporal dev server); none off Linux. */
export function childProcessIds(needle: string): number[] {
  if (os.platform() !== 'linux') return [];
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      const pid = Number(name);
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (parent !== process.pid) return [];
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        return command.includes(needle) ? [pid] : [];
      } catch {
        return [];
      }
    });
}
