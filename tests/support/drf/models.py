"""The models of the interface documents, with the bounds the documents give (SQLite enforces none)."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from tests.support.drf import collation
from tests.support.drf.config import has

INT32 = (MinValueValidator(-(2**31)), MaxValueValidator(2**31 - 1))
INT16 = (MinValueValidator(-(2**15)), MaxValueValidator(2**15 - 1))
# Django decodes %2F before routing, so an identifier with "/" could never be addressed: refuse it.
ADDRESSABLE = RegexValidator(r"^[^/]*\Z", "must not contain '/': it could not be addressed in a URL.")
# What deleting an item with dependants does: PROTECT (409), or the defect of `unprotected_fk`.
DEPENDANTS = models.DO_NOTHING if has("unprotected_fk") else models.PROTECT
# The string identifiers' collation: SQLite's binary one, or with `case_insensitive` one ignoring letter
# case (lookups, uniqueness and order), as a column has it on MySQL by default.
IDENTIFIERS = collation.NAME if has("case_insensitive") else None


def money(*, null: bool = False) -> models.DecimalField:
    """Up to 8 integer and 2 fraction digits, as the documents' pattern allows."""
    return models.DecimalField(max_digits=10, decimal_places=2, null=null, blank=null)


class ProductLine(models.Model):
    productline = models.CharField(max_length=50, primary_key=True, validators=[ADDRESSABLE], db_collation=IDENTIFIERS)
    textdescription = models.CharField(max_length=4000, null=True, blank=True)
    htmldescription = models.TextField(null=True, blank=True)
    image = models.TextField(null=True, blank=True)

    class Meta:
        ordering = ("productline",)


class Product(models.Model):
    productcode = models.CharField(max_length=15, primary_key=True, validators=[ADDRESSABLE], db_collation=IDENTIFIERS)
    productname = models.CharField(max_length=70)
    productscale = models.CharField(max_length=10)
    productvendor = models.CharField(max_length=50)
    productdescription = models.TextField()
    quantityinstock = models.SmallIntegerField(validators=INT16)
    buyprice = money()
    msrp = money()
    productline = models.ForeignKey(ProductLine, on_delete=DEPENDANTS, related_name="products")

    class Meta:
        ordering = ("productcode",)


class Employee(models.Model):
    """A sales representative: not part of the interface, only named by customers."""

    employeenumber = models.IntegerField(primary_key=True)


class Customer(models.Model):
    customernumber = models.IntegerField(primary_key=True, validators=INT32)
    customername = models.CharField(max_length=50)
    contactlastname = models.CharField(max_length=50)
    contactfirstname = models.CharField(max_length=50)
    phone = models.CharField(max_length=50)
    addressline1 = models.CharField(max_length=50)
    addressline2 = models.CharField(max_length=50, null=True, blank=True)
    city = models.CharField(max_length=50)
    state = models.CharField(max_length=50, null=True, blank=True)
    postalcode = models.CharField(max_length=15, null=True, blank=True)
    country = models.CharField(max_length=50)
    salesrepemployeenumber = models.ForeignKey(Employee, on_delete=models.SET_NULL, null=True, blank=True)
    creditlimit = money(null=True)

    class Meta:
        ordering = ("customernumber",)


class Order(models.Model):
    ordernumber = models.IntegerField(primary_key=True, validators=INT32)
    orderdate = models.DateField()
    requireddate = models.DateField()
    shippeddate = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=15)
    comments = models.TextField(null=True, blank=True)
    customernumber = models.ForeignKey(Customer, on_delete=DEPENDANTS, related_name="orders")

    class Meta:
        ordering = ("ordernumber",)


class OrderDetail(models.Model):
    quantityordered = models.IntegerField(validators=INT32)
    priceeach = money()
    orderlinenumber = models.SmallIntegerField(validators=INT16)
    ordernumber = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="details")
    productcode = models.ForeignKey(Product, on_delete=DEPENDANTS, related_name="order_details")

    class Meta:
        ordering = ("id",)


class Payment(models.Model):
    checknumber = models.CharField(max_length=50)
    paymentdate = models.DateField()
    amount = money()
    customernumber = models.ForeignKey(Customer, on_delete=DEPENDANTS, related_name="payments")

    class Meta:
        ordering = ("id",)
