"""Keep a sourdough starter alive: its hydration, a feeding, and how often to feed it."""

from dataclasses import dataclass


@dataclass
class Starter:
    """A sourdough starter: the flour and the water in it, in grams."""

    flour: int
    water: int

    def hydration(self) -> float:
        """Water as a share of flour: 1.0 is a 100 % starter."""
        return self.water / self.flour

    def feed(self, keep: int, ratio: int = 1) -> "Starter":
        """Keep `keep` grams, then add `keep * ratio` grams each of flour and water."""
        share = keep / (self.flour + self.water)
        return Starter(
            flour=round(self.flour * share) + keep * ratio,
            water=round(self.water * share) + keep * ratio,
        )


def feeding_interval_hours(room_temperature_c: float) -> int:
    """How often to feed a starter kept at a room temperature: warmer rooms ferment faster."""
    if room_temperature_c >= 26:
        return 8
    if room_temperature_c >= 21:
        return 12
    return 24
