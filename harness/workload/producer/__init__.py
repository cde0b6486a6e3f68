"""The producer that keeps a ledger: one core, run as a thread or as a process of its own.

- core.py           the producer itself: pacing, ledger lines, transactions
- client_config.py  its librdkafka settings (the harness's defaults under the spec's)
- transactions.py   one transactional call as librdkafka prescribes, its errors as events
- thread.py         the core in a thread of the runner (the default)
- supervisor.py     the runner's side of the core as a process: started, SIGKILLed, paused,
                    restarted, collected (transactional producers, producer faults)
- member.py         that process (`python -m harness.workload.producer.member`)
- pause_guard.py    a child of the supervisor: lets a paused producer go if the runner dies

Nothing is imported here: the member process loads only what it uses.
"""
