/** The page's requests to its own origin (the server checks the session cookie, and Origin on a POST). */

/** POST a JSON body; the answer's JSON, or an Error with the daemon's reason. */
export async function postJson<T>(path: string, body: unknown = {}): Promise<T & { message?: string }> {
  const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
  const answer = (await r.json().catch(() => ({}))) as T & { message?: string; error?: string };
  if (!r.ok) throw new Error(answer.error ?? `the daemon answered ${r.status}`);
  return answer;
}

/** POST an action: the daemon's message about it. */
export async function post(path: string, body: unknown = {}): Promise<string> {
  return (await postJson<object>(path, body)).message ?? 'done';
}

export async function getJson<T>(path: string): Promise<T> {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(((await r.json().catch(() => ({}))) as { error?: string }).error ?? `the daemon answered ${r.status}`);
  return (await r.json()) as T;
}
