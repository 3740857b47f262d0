// friendlyError turns the error of a failed run into one short sentence
// for people. A run that failed on the server sends its own text for the
// page (aisdk's ErrorText: webchat's says what a simulator script asked
// for and keeps other details in its log), which is shown as it is; a
// request that never reached the server, a rate limit and a timeout get
// their own sentence; anything else (an empty or overlong text) a generic
// one.
export function friendlyError(error) {
  const raw = String(error?.message ?? error ?? "").trim();
  const text = raw.toLowerCase();
  if (/failed to fetch|networkerror|network error|load failed|err_connection|econnrefused/.test(text)) {
    return "The server could not be reached. Check that it is running, then try again.";
  }
  if (/\b(429|rate.?limit|too many requests)\b/.test(text)) {
    return "The model is busy right now. Wait a moment, then try again.";
  }
  if (/timeout|timed out|deadline exceeded/.test(text)) {
    return "The model took too long to answer. Try again.";
  }
  if (raw && raw.length <= 300 && raw !== "error") return raw;
  return "Something went wrong while answering. Try again; the server's log has the details.";
}
