// friendlyError turns the error of a failed run into one short sentence
// for people. The server's error text can be a raw Go error chain
// ("agentloop: turn 2: ollama: …"); its detail belongs in the server's
// log, not on the page, so only a few recognisable kinds get their own
// sentence and everything else gets a generic one.
export function friendlyError(error) {
  const text = String(error?.message ?? error ?? "").toLowerCase();
  if (/failed to fetch|networkerror|network error|load failed|err_connection|econnrefused/.test(text)) {
    return "The server could not be reached. Check that it is running, then try again.";
  }
  if (/\b(429|rate.?limit|too many requests)\b/.test(text)) {
    return "The model is busy right now. Wait a moment, then try again.";
  }
  if (/timeout|timed out|deadline exceeded/.test(text)) {
    return "The model took too long to answer. Try again.";
  }
  return "Something went wrong while answering. Try again; the server's log has the details.";
}
