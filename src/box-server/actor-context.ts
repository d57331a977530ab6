/** Who performs an operation: the user, and the session id recorded on the events it causes. */
export interface ActorContext {
  readonly userId: string;
  readonly sessionId: string;
}
