// Package broker owns the eval broker: the leader's in-memory queue of
// evaluations waiting for a scheduler worker.
//
// # Usage
//
// The leader enables the broker when it gains leadership and fills it from
// the evals projection (every pending eval), then Enqueues each eval the log
// commits. Workers Dequeue the scheduler types they serve, and Ack an eval
// once its plan is committed or Nack it to have it redelivered. Evals that
// exceed the delivery limit move to the failed queue (DequeueFailed), for a
// processor that marks them failed and creates a follow-up.
//
// # Concurrency
//
// Every method is safe for concurrent use. One lock (mu) guards all state;
// it is never held while waiting.
//
// # Invariants
//
//   - At most one eval per (namespace, job) is ready or in flight at a
//     time; later evals for the job wait, ordered, until it is acked.
//   - Ready evals leave in priority order, then creation order.
//   - An unacked eval is redelivered after NackTimeout; a nacked one after a
//     delay that grows with its deliveries; after DeliveryLimit deliveries it
//     is failed instead.
//   - Evals with a WaitUntil in the future are held until then.
//   - Disabling the broker drops everything (the next leader rebuilds it).
package broker
