/** An error shaped like an AWS SDK v3 S3ServiceException: name, fault, status, headers. */
export function s3Error(
  name: string,
  status: number,
  message = `${name} message`,
  headers: Record<string, string> = {},
): Error {
  return Object.assign(new Error(message), {
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status, requestId: 'REQ1', attempts: 1, totalRetryDelay: 0 },
    $response: { statusCode: status, headers },
  });
}
