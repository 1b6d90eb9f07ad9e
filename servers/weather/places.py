"""The bundled gazetteer: city lookup by any common name form, close matches and prefix completion."""

from __future__ import annotations

import difflib
import json
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .models import Place
from .us_states import US_STATES


@dataclass(frozen=True)
class Climate:
    """Monthly mean temperatures (°C) for January and July, annual rain (mm) and its wet season."""

    jan: float
    jul: float
    rain_mm: float
    wet: str  # "summer" | "winter" | "even"


@dataclass(frozen=True)
class City:
    """One bundled city: its place record, alternative names and climate normals."""

    id: str
    place: Place
    aliases: tuple[str, ...]
    climate: Climate

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the city answers to (English, Chinese, aliases)."""
        return (self.place.name, *((self.place.name_zh,) if self.place.name_zh else ()), *self.aliases)


def normalize(text: str) -> str:
    """Case-fold, strip accents and collapse spaces: 'São  Paulo' -> 'sao paulo'."""
    decomposed = unicodedata.normalize("NFKD", text.strip())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(stripped.casefold().split())


def split_query(text: str) -> tuple[str, str | None]:
    """Split 'San Francisco, CA' into ('San Francisco', 'CA'); also accepts full-width commas."""
    cleaned = text.replace("，", ",").strip()
    if "," in cleaned:
        name, qualifier = cleaned.split(",", 1)
        return name.strip(), (qualifier.strip() or None)
    return cleaned, None


def matches_qualifier(place: Place, qualifier: str | None) -> bool:
    """True when the qualifier names the place's country (code or name) or region (name or US postal code)."""
    if not qualifier:
        return True
    wanted = normalize(qualifier)
    candidates = {place.country_code, place.country, place.region or ""}
    if place.country_code == "US":
        candidates |= {"USA", "United States of America", "America"}
        candidates |= {code for code, name in US_STATES.items() if name == place.region}
    if place.country_code == "GB":
        candidates |= {"UK", "Britain", "Great Britain"}
    return wanted in {normalize(c) for c in candidates if c}


def has_cjk(text: str) -> bool:
    """True when text contains CJK ideographs."""
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


class Gazetteer:
    """Lookups over the bundled city list."""

    def __init__(self, cities: list[City]) -> None:
        self.cities = sorted(cities, key=lambda c: -(c.place.population or 0))
        self._by_name: dict[str, list[City]] = {}
        for city in self.cities:
            for name in city.names:
                bucket = self._by_name.setdefault(normalize(name), [])
                if city not in bucket:
                    bucket.append(city)

    def lookup(self, query: str) -> list[City]:
        """Cities whose name matches the query exactly (qualifier applied), most populous first."""
        name, qualifier = split_query(query)
        found = self._by_name.get(normalize(name), [])
        if not found and qualifier is None:
            found = self._by_name.get(normalize(query), [])
        return [c for c in found if matches_qualifier(c.place, qualifier)]

    def get(self, city_id: str) -> City | None:
        """A city by its id (e.g. 'paris-tx')."""
        return next((c for c in self.cities if c.id == city_id), None)

    def close_matches(self, query: str, limit: int = 3) -> list[City]:
        """Cities whose names look like the query (for 'Did you mean ...?')."""
        name, _ = split_query(query)
        hits = difflib.get_close_matches(normalize(name), list(self._by_name), n=limit, cutoff=0.6)
        seen: list[City] = []
        for hit in hits:
            for city in self._by_name[hit]:
                if city not in seen:
                    seen.append(city)
        return seen[:limit]

    def search(self, query: str, limit: int = 5) -> list[City]:
        """Exact matches, then prefix and substring matches, then close matches; most populous first."""
        name, qualifier = split_query(query)
        key = normalize(name)
        ranked: list[City] = list(self.lookup(query))
        for tier in (lambda n: n.startswith(key), lambda n: key in n):
            for city in self.cities:
                if city not in ranked and any(tier(normalize(n)) for n in city.names):
                    ranked.append(city)
        ranked = [c for c in ranked if matches_qualifier(c.place, qualifier)]
        if not ranked:
            ranked = self.close_matches(query, limit)
        return ranked[:limit]

    def complete(self, prefix: str, limit: int = 100) -> list[str]:
        """City names starting with prefix: Chinese names for a CJK prefix, English otherwise."""
        key = normalize(prefix)
        chinese = has_cjk(prefix)
        names: list[str] = []
        seen: set[str] = set()
        for city in self.cities:
            pool = [city.place.name_zh or ""] if chinese else [city.place.name, *city.aliases]
            for name in pool:
                folded = normalize(name)
                if name and folded.startswith(key) and folded not in seen and has_cjk(name) == chinese:
                    seen.add(folded)
                    names.append(name)
        return names[:limit]


def _city_from_record(record: dict) -> City:
    place = Place(
        name=record["name"], name_zh=record.get("name_zh"), region=record.get("region"),
        country=record["country"], country_code=record["country_code"],
        latitude=record["lat"], longitude=record["lon"], timezone=record["tz"], population=record.get("pop"),
    )
    climate = record["climate"]
    return City(
        id=record["id"], place=place, aliases=tuple(record.get("aliases", [])),
        climate=Climate(jan=climate["jan"], jul=climate["jul"], rain_mm=climate["rain"], wet=climate["wet"]),
    )


@lru_cache(maxsize=1)
def bundled_gazetteer() -> Gazetteer:
    """The gazetteer built from data/cities.json (loaded once)."""
    text = resources.files(__package__).joinpath("data/cities.json").read_text(encoding="utf-8")
    return Gazetteer([_city_from_record(r) for r in json.loads(text)])
