import type { PutObjectCommand } from '@aws-sdk/client-s3';

/**
 * The SDK runs a request's whole middleware pipeline (building the stack, endpoint rules,
 * serializing, SigV4 signing, opening the request) as one unbroken chain of promise callbacks:
 * milliseconds during which the service's event loop answers nothing. Awaiting the next turn of
 * the loop at the seams between steps cuts that chain into short pieces, for a few microseconds
 * of upload latency.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type CommandStack = PutObjectCommand['middlewareStack'];

/** A middleware that lets the event loop take a turn, then goes on. */
const turn =
  <A, R>(next: (args: A) => Promise<R>) =>
  async (args: A): Promise<R> => {
    await nextTurn();
    return next(args);
  };

/** Adds the seams to one command's stack (never to the client's: it may be the caller's). */
export function yieldBetweenSteps(stack: CommandStack): void {
  // After building the stack and the initialize step.
  stack.add(turn, { step: 'serialize', priority: 'high', name: 'otelS3TurnBeforeSerialize' });
  // After endpoint rules and the serializer.
  stack.add(turn, { step: 'build', priority: 'high', name: 'otelS3TurnBeforeBuild' });
  // Before retries, checksums and signing.
  stack.add(turn, { step: 'finalizeRequest', priority: 'high', name: 'otelS3TurnBeforeSign' });
  // After signing; and just before the HTTP handler opens the request.
  stack.add(turn, { step: 'deserialize', priority: 'high', name: 'otelS3TurnAfterSign' });
  stack.add(turn, { step: 'deserialize', priority: 'low', name: 'otelS3TurnBeforeSend' });
}
