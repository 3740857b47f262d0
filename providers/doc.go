// Package providers holds what the model providers of agentloop share: the
// [APIError] type that every provider returns for an HTTP error answer, and
// sentinel errors to check it against with errors.Is.
//
// The providers themselves live in the sub-packages openai, anthropic and
// ollama; each has a Config, a New constructor and a *Model that implements
// agentloop.Model.
package providers
