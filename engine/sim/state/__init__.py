"""The simulator's state: the fleet (numpy arrays that check every allocation), per-region pools,
the waiting queues, the event heap, the usage ledger, the workload arrays, and its inputs' types
(the world a run sees, the queue classes)."""
