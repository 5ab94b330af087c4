/** A part of the local stack that cannot be provisioned; its message is the one line printed before exiting. */
export class StackError extends Error {
  override name = 'StackError';
}
