/**
 * Whether a process with this pid exists. Signal 0 checks without signalling; EPERM means it exists but belongs to
 * another user, which still counts as alive (a lock it holds is not stale).
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
