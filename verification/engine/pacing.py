"""How fast to ask: the retry timeout and the sending rate, learnt from the answers.

A resolver that is asked faster than it can answer (cloud resolvers cap a client at roughly
1,000 packets a second) drops the rest silently, and a lossy path drops a few at random.
Like TCP, the client learns the round trip from its answers (RFC 6298: the retry timeout is
srtt + 4 * rttvar, never above the configured timeout), and paces its sending by AIMD: each
period of a few round trips, when more than LOSS_SIGNAL of its queries went unanswered the
rate drops to what was actually answered (a congested resolver); otherwise, when the pace held
queries back, it grows, doubling
each period until the first sign of congestion (TCP's slow start), by a quarter after. A few
random losses stay under the signal and cost nothing but their retries. One pacer serves all
of a resolver's lookups, so what it learnt carries from one bulk chunk to the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LOSS_SIGNAL = 0.1  # share of unanswered tries that means "too fast", not a lossy path
# Seconds: never ask again sooner, whatever the round trip (Linux TCP's floor). Lower, a busy
# machine's scheduling hiccups pass for losses, and the pace drops for nothing.
MIN_RTO = 0.2
INITIAL_RTO = 1.0
PERIOD = 0.05  # seconds at least between two changes of pace
MIN_RATE = 50.0  # queries a second, the floor of the backing off
START_RATE = 10_000.0  # queries a second at first (the window of queries in flight bounds it too)
SLOW_START_GROWTH, GROWTH = 2.0, 1.25
MAX_RATE = 1e6  # growth stops here: far beyond what one process can send
BURST_SECONDS = 0.01  # tokens kept for a burst: 10 ms of the rate


@dataclass
class Pacer:
    timeout: float  # the longest any try waits
    max_qps: float | None = None
    rate: float = START_RATE
    srtt: float | None = None
    rttvar: float = 0.0
    tokens: float = 1.0
    refilled: float = 0.0  # when tokens were last added
    period_start: float = 0.0
    sent_in: dict[int, int] = field(default_factory=dict)  # tries sent, by period of PERIOD s
    lost_in: dict[int, int] = field(default_factory=dict)  # of those, gone unanswered
    congested: bool = False  # seen congestion once: grow gently from now on
    held_back: bool = False  # the pace kept a query waiting this period
    changed: float = 0.0  # when the pace last changed

    def __post_init__(self) -> None:
        self.rate = min(self.rate, self.max_qps or self.rate)

    def rto(self) -> float:
        if self.srtt is None:  # no round trip measured yet: RFC 6298's initial 1 s
            return min(self.timeout, INITIAL_RTO)
        return min(self.timeout, max(MIN_RTO, self.srtt + 4 * self.rttvar))

    def may_send(self, now: float) -> bool:
        """Spend a token if there is one (the caller then sends one query)."""
        return self.take(now, 1) == 1

    def take(self, now: float, wanted: int) -> int:
        """Spend up to `wanted` tokens at once, as that many `may_send(now)` would, one after the other:
        how many there were (each sends one query). A batch's queries go out a window at a time."""
        burst = max(1.0, self.rate * BURST_SECONDS)
        self.tokens = min(burst, self.tokens + (now - self.refilled) * self.rate)
        self.refilled = now
        granted = min(wanted, int(self.tokens)) if self.tokens >= 1.0 else 0
        if granted < wanted:
            self.held_back = True
        if granted:
            self.tokens -= granted
            period = int(now / PERIOD)
            self.sent_in[period] = self.sent_in.get(period, 0) + granted
        return granted

    def next_token_in(self) -> float:
        return max(0.0, (1.0 - self.tokens) / self.rate)

    def on_answer(self, now: float, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:  # RFC 6298 section 2.3
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self._adjust(now)

    def on_loss(self, now: float, sent_at: float) -> None:
        """A try sent at `sent_at` went unanswered: counted against the tries sent with it, since
        the losses of a burst all show at once, a retry timeout later."""
        period = int(sent_at / PERIOD)
        self.lost_in[period] = self.lost_in.get(period, 0) + 1
        self._adjust(now)

    def _adjust(self, now: float) -> None:
        if now - self.period_start < max(PERIOD, 2 * (self.srtt or 0.0)):
            return
        if self._congestion(now):
            self.congested, self.changed = True, now
        elif self.held_back and (not self.congested or now - self.changed >= self.rto()):
            # The pace held queries back and none went missing: raise it. Once congestion was
            # seen, only after a retry timeout, when the losses of the last raise would show.
            growth = GROWTH if self.congested else SLOW_START_GROWTH
            self.rate = min(self.rate * growth, self.max_qps or MAX_RATE)
            self.changed = now
        self.period_start, self.held_back = now, False

    def _congestion(self, now: float) -> bool:
        """Judge the send periods whose tries have all been answered or timed out; on too many
        losses, slow to the rate that period was answered at (at most half the pace)."""
        settled = int((now - self.rto()) / PERIOD) - 1
        slowed = False
        for period in [p for p in self.sent_in if p <= settled]:
            sent, lost = self.sent_in.pop(period), self.lost_in.pop(period, 0)
            if lost > max(2, LOSS_SIGNAL * sent) and now - self.changed >= self.rto():
                self.rate = max(MIN_RATE, min(self.rate / 2, 0.9 * (sent - lost) / PERIOD))
                slowed = True
        for period in [p for p in self.lost_in if p <= settled]:
            del self.lost_in[period]
        return slowed
