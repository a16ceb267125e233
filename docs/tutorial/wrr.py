"""Weighted round-robin: one FIFO per PCPU, turns of 10 ms x weight / 256; CappedWRR adds caps."""

from collections import deque

import vmsched

TURN_NS = 10_000_000  # the turn of a weight-256 VCPU, and the period caps are counted in


class WeightedRR(vmsched.Scheduler):
    """Weighted round-robin: per-PCPU FIFO, turns in proportion to weights."""

    title = "Weighted RR"
    params = {"weight": vmsched.Param(256, min=1, max=65535, doc="Relative length of a turn")}

    def init(self):
        self.queues = [deque() for _ in range(self.host.npcpus)]
        self.load = [0] * self.host.npcpus
        self.turn = [TURN_NS] * self.host.nvcpus

    def init_domain(self, dom, params):
        for v in self.host.vcpus_of(dom):
            self.turn[v] = TURN_NS * params["weight"] // 256

    adjust = init_domain

    def insert_vcpu(self, vcpu):
        pcpu = min(self.host.hard_affinity(vcpu), key=lambda p: self.load[p])
        self.load[pcpu] += 1
        self.host.set_processor(vcpu, pcpu)

    def wake(self, vcpu):
        pcpu = self.host.processor(vcpu)
        if vcpu not in self.queues[pcpu] and self.host.running_on(vcpu) is None:
            self.queues[pcpu].append(vcpu)
            if self.host.current(pcpu) is None:
                self.host.tickle(pcpu)

    def sleep(self, vcpu):
        if self.host.running_on(vcpu) is not None:
            self.host.tickle(self.host.running_on(vcpu))
        elif vcpu in self.queues[self.host.processor(vcpu)]:
            self.queues[self.host.processor(vcpu)].remove(vcpu)

    def do_schedule(self, pcpu):
        prev, queue = self.host.current(pcpu), self.queues[pcpu]
        if prev is not None and self.host.runnable(prev):
            queue.append(prev)
        for _ in range(len(queue)):
            vcpu = queue.popleft()
            if self.may_run(vcpu):
                return vcpu, self.slice(vcpu)
            queue.append(vcpu)
        return None

    def may_run(self, vcpu):
        return True

    def slice(self, vcpu):
        return self.turn[vcpu]


class CappedWRR(WeightedRR):
    """WeightedRR with caps: a domain with cap = A runs at most A % of each 10 ms period."""

    title = "Weighted RR with caps"
    cap = vmsched.Param(0, unit="%", min=0, max=100, doc="Most CPU per 10 ms (0: none)")
    params = {**WeightedRR.params, "cap": cap}
    allocation = {"rule": "cap = A", "domain": [{"name": "cap", "unit": "%", "share_of": 100}]}

    def init(self):
        super().init()
        self.budget, self.left = [None] * self.host.nvcpus, [None] * self.host.nvcpus
        self.since = [0] * self.host.npcpus
        self.host.arm_timer(0, TURN_NS, 0)

    def init_domain(self, dom, params):
        super().init_domain(dom, params)
        for v in self.host.vcpus_of(dom):
            self.budget[v] = self.left[v] = TURN_NS * params["cap"] // 100 or None

    adjust = init_domain

    def timer(self, id):  # a new period: budgets back, every PCPU decides again
        now = self.host.now()
        self.left = list(self.budget)
        self.since = [now] * self.host.npcpus
        self.host.arm_timer(0, now + TURN_NS, 0)
        for pcpu in range(self.host.npcpus):
            self.host.tickle(pcpu)

    def do_schedule(self, pcpu):  # charge the previous VCPU's run to its budget
        now, prev = self.host.now(), self.host.current(pcpu)
        if prev is not None and self.left[prev] is not None:
            self.left[prev] -= now - self.since[pcpu]
        self.since[pcpu] = now
        return super().do_schedule(pcpu)

    def may_run(self, vcpu):  # out of budget until the next period
        return self.left[vcpu] is None or self.left[vcpu] > 0

    def slice(self, vcpu):
        return min(self.turn[vcpu], self.left[vcpu] or self.turn[vcpu])
