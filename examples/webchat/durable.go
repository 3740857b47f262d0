package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS on SQLite

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/durable/dbosrun"
)

// This file runs the chats' runs durably, on DBOS (durable/dbosrun): each
// run is a DBOS workflow whose model and tool calls are recorded steps, so
// a run outlives the process that started it. DBOS keeps its state in the
// chats' database: PostgreSQL (its own tables, in the schema of the -db
// URL's search_path, or "dbos"), or an SQLite file next to the chats'
// (<db>-dbos), since two SQLite drivers on one file would wait for each
// other's locks.

// engineShutdown bounds how long the engine waits for the runs it stops
// at shutdown to hand over.
const engineShutdown = 5 * time.Second

// durableEngine is the DBOS context of a webchat process.
type durableEngine struct {
	dbos     dbos.Context
	executor string
}

// newEngine opens DBOS on the database of cfg (database is openStore's
// kind: "SQLite" or "PostgreSQL"), for the runs of agent, and registers
// its runner, whose items go to onItem (the chat server's RunItem); launch
// starts it once the chat server is ready. The listening address names
// the executor unless -executor does.
func newEngine(ctx context.Context, cfg config, database string, agent *agentloop.Agent, onItem func(string, agentloop.Item, error), logger *slog.Logger) (*durableEngine, *dbosrun.Runner, error) {
	// One application version across builds, so that a new build (a deploy)
	// resumes the runs an older one left.
	dc := dbos.Config{AppName: "agentloop-webchat", ApplicationVersion: "agentloop-webchat", Logger: logger, ExecutorID: cfg.executor}
	switch database {
	case "PostgreSQL":
		dc.DatabaseURL = cfg.db
		if u, err := url.Parse(cfg.db); err == nil {
			if s := u.Query().Get("search_path"); s != "" && !strings.Contains(s, ",") {
				dc.DatabaseSchema = s
			}
		}
	case "SQLite":
		dc.DatabaseURL = "sqlite:" + strings.TrimSuffix(sqlitePath(cfg), ".db") + "-dbos.db"
	default:
		return nil, nil, fmt.Errorf("durable runs need SQLite or PostgreSQL, not %s", database)
	}
	if dc.ExecutorID == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "webchat"
		}
		_, port, _ := net.SplitHostPort(cfg.listen)
		dc.ExecutorID = host + ":" + port
	}
	// Not ctx itself: DBOS cancels the workflows of a cancelled context
	// for good; at shutdown, close stops it so that they are resumed.
	d, err := dbos.NewContext(context.WithoutCancel(ctx), dc)
	if err != nil {
		return nil, nil, fmt.Errorf("durable runs (DBOS): %w", err)
	}
	r, err := dbosrun.New(d, agent, dbosrun.Options{Name: "webchat", OnItem: onItem})
	if err != nil {
		_ = dbos.Shutdown(d, engineShutdown)
		return nil, nil, err
	}
	return &durableEngine{dbos: d, executor: dc.ExecutorID}, r, nil
}

// launch starts the engine; it recovers the runs this executor left
// pending, which go on through chat.
func (e *durableEngine) launch() error {
	if err := dbos.Launch(e.dbos); err != nil {
		return fmt.Errorf("durable runs (DBOS): %w", err)
	}
	return nil
}

// adopt resumes, every third of the stream lease until ctx is done, the
// runs that other executors abandoned (chat.Abandoned: their process died
// and their stream lease ran out, or their process handed them over at
// SIGTERM and released it, while their chat waits for them): DBOS then
// runs them on one of the live executors, and the chat server goes on with
// them in a new stream of their chat.
func (e *durableEngine) adopt(ctx context.Context, chat *aisdk.ChatServer, lease time.Duration, logger *slog.Logger) {
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ws, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterStatus(dbos.WorkflowStatusPending))
		if err != nil {
			logger.Warn("webchat: listing pending runs", "error", err)
			continue
		}
		for _, w := range ws {
			if w.ExecutorID == e.executor {
				continue
			}
			if ok, err := chat.Abandoned(ctx, w.ID); err != nil || !ok {
				continue
			}
			if _, err := dbos.ResumeWorkflow[any](e.dbos, w.ID); err != nil {
				logger.Warn("webchat: resuming an abandoned run", "run", w.ID, "error", err)
				continue
			}
			logger.Info("webchat: resumed a run that executor "+w.ExecutorID+" abandoned", "run", w.ID)
		}
	}
}

// close stops the engine: the runs in flight are handed over, to be
// resumed when this executor starts again.
func (e *durableEngine) close() {
	_ = dbos.Shutdown(e.dbos, engineShutdown)
}

var _ aisdk.Runner = (*dbosrun.Runner)(nil)
