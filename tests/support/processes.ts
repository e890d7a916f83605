/** Whether a process with this pid exists (signal 0: nothing is sent). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
