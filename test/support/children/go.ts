/**
 * Children a parent starts ahead of their test. Starting one costs a second or more of CPU
 * (tsx, the SDK, the exporter's modules), so a test starts a child before the part it times and
 * lets it go then; until then it waits without a timer or any work.
 *
 * With GO_ON_STDIN=1, the child prints `{"ready":true}` once its modules are loaded and waits
 * for a line on stdin; then it closes stdin, which keeps nothing alive afterwards. Without it,
 * the child goes on at once.
 */
export async function waitForGo(): Promise<void> {
  if (process.env.GO_ON_STDIN !== '1') return;
  console.log(JSON.stringify({ ready: true }));
  await new Promise<void>((resolve, reject) => {
    process.stdin.once('data', () => resolve());
    process.stdin.once('end', () => reject(new Error('stdin closed before the go')));
  });
  process.stdin.destroy();
}
