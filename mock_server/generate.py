"""`shop-mock generate`, a large and internally consistent shop data set for benchmarks and `--fixtures`.

The committed fixtures in ``fixtures/`` are small and hand-made. Load tests and benchmarks need the
same six collections at a much larger scale, up to millions of products. This module writes them in
the fixtures' format, one JSON array of objects per collection. Every reference resolves. Order
details point at existing orders and products, and orders and payments at existing customers.

Records are streamed to disk one at a time, and every product attribute is derived from its index.
So memory stays bounded whatever the size. Only the standard library is used (and `stops.py`, its signal
handling, which uses it alone), so it runs without the server's dependencies::

    shop-mock generate --products 1000000 --out /tmp/bench [--seed 7]

It is a tool beside the server, not a layer of it. Nothing in the mock imports it, and the CLI
hands it the subcommand's arguments.

Long because a third of it is the vocabulary the records are drawn from, such as product lines,
vendors, names and cities. Each table sits next to the one generator that reads it. The rest is one
pass that writes the six collections so that every reference resolves. Split, the parts would only
import each other.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import IO, Any, NoReturn

from mock_server.stops import Interrupted, Stops

Record = dict[str, Any]
DESCRIPTION = "Write a large, consistent shop data set (six JSON files) for benchmarks."

PRODUCT_LINES: tuple[str, ...] = (
    "Classic Cars",
    "Motorcycles",
    "Planes",
    "Ships",
    "Trains",
    "Trucks and Buses",
    "Vintage Cars",
    "Construction Vehicles",
)
# Ordered so that product codes ("S700_..." < "S72_...") sort like product indexes.
SCALES: tuple[str, ...] = ("1:10", "1:12", "1:18", "1:24", "1:32", "1:50", "1:700", "1:72")
VENDORS: tuple[str, ...] = (
    "Min Lin Diecast",
    "Autoart Studio Design",
    "Classic Metal Creations",
    "Highway 66 Mini Classics",
    "Red Start Diecast",
    "Motor City Art Classics",
    "Second Gear Diecast",
    "Welly Diecast Productions",
    "Unimax Art Galleries",
    "Studio M Art Models",
    "Exoto Designs",
    "Gearbox Collectibles",
    "Carousel DieCast Legends",
)
# Model subjects per product line, in PRODUCT_LINES order.
SUBJECTS: tuple[tuple[str, ...], ...] = (
    ("Ford Mustang", "Ferrari Enzo", "Porsche 356 Roadster", "Chevy Corvette", "Alfa Romeo GTA"),
    ("Harley Davidson Chopper", "Ducati Monster", "Vespa GS150", "BMW R 1100 S", "Moto Guzzi"),
    ("Boeing 767", "P-51-D Mustang", "Black Hawk Helicopter", "Vintage Bi-Plane", "Corsair F4U"),
    ("Schooner", "Clipper Ship", "Speed Boat", "Ocean Liner", "Frigate"),
    ("Streetcar", "Steam Locomotive", "Wooden Train", "Diesel Switcher", "Pullman Car"),
    ("Setra Bus", "Ford Pickup", "Fire Engine", "Peterbilt Stake Bed", "Tanker"),
    ("Ford Model T", "Mercedes-Benz SSK", "Cadillac Limousine", "Buick Runabout", "Horse Carriage"),
    ("Caterpillar Bulldozer", "Dump Truck", "Tower Crane", "Wheel Loader", "Road Roller"),
)
FEATURES: tuple[str, ...] = (
    "working steering system",
    "opening doors",
    "rotating wheels",
    "official logos",
    "detailed engine",
    "display stand",
    "rubber tires",
    "hand-painted details",
    "retractable landing gear",
    "spare wheel",
)
COMPANY_HEADS: tuple[str, ...] = (
    "Atelier",
    "Signal",
    "Euro+",
    "Mini",
    "Classic",
    "Diecast",
    "Toy",
    "Blauer See",
    "Dragon",
    "Royal",
    "Muscle",
    "Vintage",
)
COMPANY_TAILS: tuple[str, ...] = (
    "Gifts",
    "Imports",
    "Collectables, Co.",
    "Souveniers, Ltd.",
    "Replicas Inc.",
    "Models",
    "Wholesale",
    "Distributors",
)
FIRST_NAMES: tuple[str, ...] = (
    "Carine",
    "Jean",
    "Peter",
    "Janine",
    "Jonas",
    "Susan",
    "Roland",
    "Julie",
    "Kwai",
    "Diego",
    "Christina",
    "Mary",
    "Eric",
    "Yoshi",
)
LAST_NAMES: tuple[str, ...] = (
    "Schmitt",
    "King",
    "Ferguson",
    "Labrune",
    "Bergulfsen",
    "Nelson",
    "Keitel",
    "Murphy",
    "Lee",
    "Freyre",
    "Berglund",
    "Saveley",
    "Tamuri",
)
# Each place is a city, a state or None, a country, and a postal code or None.
PLACES: tuple[tuple[str, str | None, str, str | None], ...] = (
    ("Nantes", None, "France", "44000"),
    ("Las Vegas", "NV", "USA", "83030"),
    ("Melbourne", "Victoria", "Australia", "3004"),
    ("Stavern", None, "Norway", "4110"),
    ("San Rafael", "CA", "USA", "97562"),
    ("Frankfurt", None, "Germany", "60528"),
    ("Madrid", None, "Spain", "28034"),
    ("Singapore", None, "Singapore", "079903"),
    ("Central Hong Kong", None, "Hong Kong", None),
    ("Dublin", None, "Ireland", None),
    ("Vancouver", "BC", "Canada", "V3F 2K1"),
    ("Osaka", "Osaka", "Japan", "530-0003"),
)
STATUSES: tuple[str, ...] = ("Shipped", "Resolved", "Disputed", "Cancelled", "On Hold", "In Process")
STATUS_WEIGHTS: tuple[int, ...] = (86, 3, 2, 3, 2, 4)
UNSHIPPED: frozenset[str] = frozenset({"Cancelled", "On Hold", "In Process"})
PAID: frozenset[str] = frozenset({"Shipped", "Resolved"})
COMMENTS: tuple[str, ...] = (
    "Check on availability.",
    "Customer requested that FedEx Ground is used for this shipping",
    "Customer credit limit exceeded. Will ship when a payment is received",
    "Customer requested special shipment.",
)
FIRST_ORDER_DAY = date(2003, 1, 6)
ORDER_SPAN_DAYS = 880
MAX_LINES_PER_ORDER = 8
_ENCODER = json.JSONEncoder(ensure_ascii=False)
_MIX = 2654435761  # Knuth's multiplicative hash constant.


class UsageError(Exception):
    """Bad command-line input. It is reported as one line with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclass(frozen=True)
class Sizes:
    """How many records of each kind to write."""

    products: int
    customers: int
    seed: int


FIRST_ORDER_NUMBER = 10100
MAX_PRODUCTS = 2**31 - FIRST_ORDER_NUMBER
"""The most products whose data the spec admits: an order per product at most, numbered from
`FIRST_ORDER_NUMBER`, each number an int32 (`Order.ordernumber`); a product's code stays within its 15
characters up to 10**10 (tests/mock_server/test_generate.py reads both bounds from the spec)."""


def _product_count(text: str) -> int:
    """`--products`: a whole number from 1 to `MAX_PRODUCTS` (10**20 wrote codes and numbers the spec refuses)."""
    try:
        value = int(text)
    except ValueError:
        if text.strip().isascii() and text.strip().lstrip("+-").isdigit():  # past int()'s 4300 digits
            raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_PRODUCTS}, got {len(text)} digits") from None
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if not 1 <= value <= MAX_PRODUCTS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_PRODUCTS}, got {text.strip()[:40]}")
    return value


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


MIN_MSRP_CENTS, MSRP_RANGE_CENTS = 3000, 20000
# Every product and order-line price is below the highest MSRP, so their texts are looked up, not formatted.
_PRICE_TEXT: tuple[str, ...] = tuple(_money(cents) for cents in range(MIN_MSRP_CENTS + MSRP_RANGE_CENTS))


def _mix(index: int, salt: int) -> int:
    return ((index + 1) * _MIX + salt * 40503) % 4294967291


def scale_blocks(total: int) -> Iterator[tuple[str, range]]:
    """Consecutive blocks of product indexes sharing a scale, in code order."""
    # Block n starts at ceil(n * total / len(SCALES)), the inverse of product_code's floor.
    count = len(SCALES)
    for number, scale in enumerate(SCALES):
        yield scale, range(-(-number * total // count), -(-(number + 1) * total // count))


def product_code(index: int, total: int) -> str:
    """Product code of the product at ``index`` (e.g. ``S18_0000042``)."""
    return f"S{SCALES[index * len(SCALES) // total][2:]}_{index:07d}"


def msrp_cents(index: int, seed: int) -> int:
    """Manufacturer's suggested retail price of a product, in cents."""
    return MIN_MSRP_CENTS + _mix(index, seed) % MSRP_RANGE_CENTS


def productlines() -> Iterator[Record]:
    for name in sorted(PRODUCT_LINES):
        yield {
            "productline": name,
            "textdescription": f"Scale-model replicas in the {name} range.",
            "htmldescription": f"<p>{name}</p>",
            "image": None,
        }


def products(sizes: Sizes) -> Iterator[Record]:
    for scale, indexes in scale_blocks(sizes.products):
        for index in indexes:
            yield _product(index, scale, sizes.seed)


def _product(index: int, scale: str, seed: int) -> Record:
    h = _mix(index, seed)
    msrp = msrp_cents(index, seed)
    line = index % len(PRODUCT_LINES)
    first = h % 10
    second = (first + 1 + (h >> 4) % 4) % 10
    third = (second + 1 + (h >> 8) % 4) % 10
    return {
        "productcode": f"S{scale[2:]}_{index:07d}",
        "productname": f"{1900 + h % 105} {SUBJECTS[line][(h >> 3) % 5]}",
        "productscale": scale,
        "productvendor": VENDORS[(h >> 5) % len(VENDORS)],
        "productdescription": f"This replica features {FEATURES[first]}, {FEATURES[second]} and {FEATURES[third]}.",
        "quantityinstock": (h >> 2) % 10000,
        "buyprice": _PRICE_TEXT[msrp * (50 + (h >> 9) % 15) // 100],
        "msrp": _PRICE_TEXT[msrp],
        "productline": PRODUCT_LINES[line],
    }


def customer_number(index: int) -> int:
    return 103 + index


def customers(sizes: Sizes) -> Iterator[Record]:
    rng = random.Random(sizes.seed)
    for index in range(sizes.customers):
        city, state, country, postal = PLACES[rng.randrange(len(PLACES))]
        has_rep = rng.random() < 0.9
        yield {
            "customernumber": customer_number(index),
            "customername": f"{rng.choice(COMPANY_HEADS)} {rng.choice(COMPANY_TAILS)}",
            "contactlastname": rng.choice(LAST_NAMES),
            "contactfirstname": rng.choice(FIRST_NAMES),
            "phone": f"{rng.randrange(200, 999)}555{rng.randrange(1000, 9999)}",
            "addressline1": f"{rng.randrange(1, 9999)} Strong St.",
            "addressline2": f"Suite {rng.randrange(100, 999)}" if rng.random() < 0.2 else None,
            "city": city,
            "state": state,
            "postalcode": postal,
            "country": country,
            "salesrepemployeenumber": 1000 + rng.randrange(700) if has_rep else None,
            "creditlimit": _money(rng.randrange(20, 230) * 100_000) if has_rep else None,
        }


@dataclass
class OrderBatch:
    """One order with its details and, if paid, its payment."""

    order: Record
    details: list[Record]
    payment: Record | None


def _order_record(number: int, day: date, customer: int, rng: random.Random) -> Record:
    status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
    shipped = None if status in UNSHIPPED else day + timedelta(days=rng.randint(1, 6))
    return {
        "ordernumber": number,
        "orderdate": day.isoformat(),
        "requireddate": (day + timedelta(days=rng.randint(7, 10))).isoformat(),
        "shippeddate": shipped.isoformat() if shipped else None,
        "status": status,
        "comments": rng.choice(COMMENTS) if rng.random() < 0.15 else None,
        "customernumber": customer,
    }


def _distinct_indexes(rng: random.Random, total: int, count: int) -> list[int]:
    """``count`` distinct product indexes, or all of them if there are fewer."""
    if count >= total:
        return list(range(total))
    chosen: dict[int, None] = {}
    while len(chosen) < count:
        chosen[int(rng.random() * total)] = None
    return list(chosen)


def _detail_records(number: int, first_id: int, count: int, sizes: Sizes, rng: random.Random) -> list[Record]:
    codes = _distinct_indexes(rng, sizes.products, count)
    return [
        {
            "id": first_id + line,
            "quantityordered": 20 + int(rng.random() * 51),
            "priceeach": _PRICE_TEXT[msrp_cents(index, sizes.seed) * (85 + int(rng.random() * 16)) // 100],
            "orderlinenumber": line + 1,
            "ordernumber": number,
            "productcode": product_code(index, sizes.products),
        }
        for line, index in enumerate(codes)
    ]


def _payment_record(order: Record, details: list[Record], payment_id: int, rng: random.Random) -> Record:
    total = sum(int(d["priceeach"].replace(".", "")) * d["quantityordered"] for d in details)
    paid = date.fromisoformat(order["shippeddate"]) + timedelta(days=rng.randint(3, 45))
    letters = chr(65 + rng.randrange(26)) + chr(65 + rng.randrange(26))
    return {
        "id": payment_id,
        "checknumber": f"{letters}{payment_id:07d}",
        "paymentdate": paid.isoformat(),
        "amount": _money(total),
        "customernumber": order["customernumber"],
    }


def order_batches(sizes: Sizes) -> Iterator[OrderBatch]:
    """Orders until there is about one order detail per product."""
    rng = random.Random(sizes.seed + 1)
    estimated_orders = max(1, sizes.products * 2 // (MAX_LINES_PER_ORDER + 1))
    detail_id, payment_id, index = 1, 1, 0
    while detail_id <= sizes.products:
        day = FIRST_ORDER_DAY + timedelta(days=index * ORDER_SPAN_DAYS // estimated_orders)
        customer = customer_number(index if index < sizes.customers else rng.randrange(sizes.customers))
        order = _order_record(FIRST_ORDER_NUMBER + index, day, customer, rng)
        count = min(rng.randint(1, MAX_LINES_PER_ORDER), sizes.products - detail_id + 1)
        details = _detail_records(order["ordernumber"], detail_id, count, sizes, rng)
        payment = None
        if order["status"] in PAID:
            payment = _payment_record(order, details, payment_id, rng)
            payment_id += 1
        yield OrderBatch(order, details, payment)
        detail_id += len(details)
        index += 1


class JsonArrayWriter:
    """Stream records into a file as one JSON array, one record per line.

    Records are encoded in batches. One C-encoder call per batch is several times faster than one
    ``json.dumps`` call per record.
    """

    BATCH = 5000

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._batch: list[Record] = []
        self._count = 0

    def write(self, record: Record) -> None:
        self._batch.append(record)
        if len(self._batch) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        # "[{...}, {...}]" becomes "{...},\n{...}". The item separator after a record is the only
        # "}, {", because generated strings hold no braces.
        text = _ENCODER.encode(self._batch)[1:-1].replace("}, {", "},\n{")
        self._stream.write(",\n" if self._count else "[\n")
        self._stream.write(text)
        self._count += len(self._batch)
        self._batch.clear()

    def close(self) -> int:
        self._flush()
        self._stream.write("\n]\n" if self._count else "[]\n")
        return self._count


def _write_all(path: Path, records: Iterator[Record]) -> int:
    with path.open("w", encoding="utf-8") as stream:
        writer = JsonArrayWriter(stream)
        for record in records:
            writer.write(record)
        return writer.close()


def _write_orders(out: Path, sizes: Sizes) -> dict[str, int]:
    with (
        (out / "orders.json").open("w", encoding="utf-8") as orders_file,
        (out / "orderdetails.json").open("w", encoding="utf-8") as details_file,
        (out / "payments.json").open("w", encoding="utf-8") as payments_file,
    ):
        orders = JsonArrayWriter(orders_file)
        details = JsonArrayWriter(details_file)
        payments = JsonArrayWriter(payments_file)
        for batch in order_batches(sizes):
            orders.write(batch.order)
            for detail in batch.details:
                details.write(detail)
            if batch.payment is not None:
                payments.write(batch.payment)
        return {"orders": orders.close(), "orderdetails": details.close(), "payments": payments.close()}


def generate(out: Path, sizes: Sizes, stops: Stops | None = None) -> dict[str, int]:
    """Write the six collections into ``out``, and return the record counts by file stem.

    They are written in a directory of their own inside ``out`` and renamed into it once all are whole
    (`stops` settled first), so an interrupted run (`Interrupted`, a full disk) leaves ``out`` as it was."""
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".generating-", dir=out))
    try:
        counts = {
            "productlines": _write_all(staging / "productlines.json", productlines()),
            "products": _write_all(staging / "products.json", products(sizes)),
            "customers": _write_all(staging / "customers.json", customers(sizes)),
        }
        counts.update(_write_orders(staging, sizes))
        if stops is not None:
            stops.settled()
        for stem in counts:
            os.replace(staging / f"{stem}.json", out / f"{stem}.json")
        return counts
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = _Parser(prog="shop-mock generate", description=DESCRIPTION)
    parser.add_argument(
        "--products", type=_product_count, required=True, help=f"number of products to generate (1 to {MAX_PRODUCTS})"
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default: 42)")
    return parser.parse_args(argv)


def _fail(message: str) -> int:
    print(f"shop-mock generate: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parse(argv)
    except UsageError as exc:
        return _fail(str(exc))
    sizes = Sizes(products=args.products, customers=max(30, args.products // 100), seed=args.seed)
    try:
        with Stops().installed() as stops:
            counts = generate(args.out, sizes, stops)
    except OSError as exc:
        return _fail(f"cannot write to {args.out}: {exc.strerror or exc}")
    except Interrupted as exc:
        return _fail(f"{exc}: nothing written to {args.out}")
    print(" ".join(f"{name}={count}" for name, count in counts.items()))
    return 0
