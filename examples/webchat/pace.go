package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// defaultPace is -pace's default: about 30 words a second, what a small
// local model streams.
const defaultPace = 35 * time.Millisecond

// slowToolFactor is how many word pauses the demo's get_weather takes:
// 150 × 35 ms ≈ 5 s, long enough to see its running state and stop it
// (and, in the browser test at 70 ms, to reload a page on a loaded machine
// before it ends: 70 × 70 ms was not).
const slowToolFactor = 150

// pacing makes the built-in demo stream like a real model: a pause after
// each word of text and reasoning, and a get_weather that takes a while.
// The zero value streams everything at once (what the tests use).
type pacing struct {
	word time.Duration // pause after each streamed word
	tool time.Duration // how long the slow tool takes
}

// newPacing paces the demo at one word per word duration; 0 (or less)
// turns pacing off.
func newPacing(word time.Duration) pacing {
	if word <= 0 {
		return pacing{}
	}
	return pacing{word: word, tool: slowToolFactor * word}
}

// demoPacing is the pacing cfg asks for: -pace for the built-in demo, none
// for a script or a real model.
func demoPacing(cfg config) pacing {
	if cfg.script != "" || cfg.model != "" {
		return pacing{}
	}
	return newPacing(cfg.pace)
}

// text is s as answer text, streamed a word at a time.
func (p pacing) text(s string) []simtest.Step { return p.words(s, simtest.Text) }

// reasoning is s as reasoning text, streamed a word at a time.
func (p pacing) reasoning(s string) []simtest.Step { return p.words(s, simtest.Reasoning) }

func (p pacing) words(s string, step func(string) simtest.Step) []simtest.Step {
	if p.word <= 0 {
		return []simtest.Step{step(s)}
	}
	var steps []simtest.Step
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			steps = append(steps, step(w), simtest.Delay(p.word))
		}
	}
	return steps
}

// slowTool makes the named tool take p.tool before it runs; a cancelled
// call (the page's Stop, which stops the run) returns at once with the context's error. With
// pacing off, or no such tool, it changes nothing.
func (p pacing) slowTool(tools []*agentloop.Tool, name string) {
	if p.tool <= 0 {
		return
	}
	for _, t := range tools {
		if t.Name != name || t.Func == nil {
			continue
		}
		run, wait := t.Func, p.tool
		t.Func = func(ctx context.Context, args json.RawMessage) (string, error) {
			timer := time.NewTimer(wait)
			defer timer.Stop()
			select {
			case <-timer.C:
				return run(ctx, args)
			case <-ctx.Done():
				return "", fmt.Errorf("%s stopped before it finished: %w", name, ctx.Err())
			}
		}
	}
}
