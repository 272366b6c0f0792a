package raftlog

import (
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// timedLogStore measures how long raft waits on the log store's synced appends.
type timedLogStore struct {
	raft.LogStore
	h prometheus.Histogram
}

func (s timedLogStore) StoreLogs(logs []*raft.Log) error {
	start := time.Now()
	err := s.LogStore.StoreLogs(logs)
	s.h.Observe(time.Since(start).Seconds())
	return err
}

func (s timedLogStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }
