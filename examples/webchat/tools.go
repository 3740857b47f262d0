package main

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"

	"github.com/agentloop/agentloop"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=The city to forecast, e.g. Paris"`
}

// forecast is get_weather's output.
type forecast struct {
	City       string `json:"city"`
	Conditions string `json:"conditions"`
	HighC      int    `json:"high_c"`
	LowC       int    `json:"low_c"`
}

// weather returns a made-up forecast that depends only on the city name.
func weather(_ context.Context, a weatherArgs) (forecast, error) {
	city := strings.TrimSpace(a.City)
	if city == "" {
		return forecast{}, errors.New("city is empty; pass a city name")
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(city)))
	n := h.Sum32()
	conditions := []string{"sunny", "partly cloudy", "cloudy", "light rain", "windy", "snow showers"}
	high := int(n%25) + 5
	return forecast{City: city, Conditions: conditions[n/25%uint32(len(conditions))], HighC: high, LowC: high - 4 - int(n/7%5)}, nil
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type deleteArgs struct {
	ID int `json:"id" jsonschema:"description=The id of the record to delete"`
}

// backendTools returns the tools the server runs: get_weather, add, and
// delete_record, which needs the user's approval.
func backendTools() ([]*agentloop.Tool, error) {
	w, err := agentloop.NewTool("get_weather", "Get the weather forecast for a city.", weather)
	if err != nil {
		return nil, err
	}
	add, err := agentloop.NewTool("add", "Add two numbers.", func(_ context.Context, a addArgs) (map[string]float64, error) {
		return map[string]float64{"sum": a.A + a.B}, nil
	})
	if err != nil {
		return nil, err
	}
	del, err := agentloop.NewTool("delete_record", "Delete a record by id. The user must approve each call.", func(_ context.Context, a deleteArgs) (map[string]any, error) {
		return map[string]any{"deleted": true, "id": a.ID}, nil
	})
	if err != nil {
		return nil, err
	}
	del.NeedsApproval = true
	return []*agentloop.Tool{w, add, del}, nil
}
