/**
 * CPU profile of one window of this process's main thread (node:inspector), for attributing
 * a stall to functions without profiling the set-up around it.
 */
import { Session } from 'node:inspector/promises';
import type { Profile } from './busy-stretches.js';

export interface Profiling {
  stop(): Promise<Profile>;
}

export async function startProfiling(intervalMicros = 100): Promise<Profiling> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalMicros });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      return profile as unknown as Profile;
    },
  };
}
