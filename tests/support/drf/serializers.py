"""ModelSerializers of the interface, with the spec's decisions DRF does not make by itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.db import models
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.utils import html

from tests.support.drf.config import has
from tests.support.drf.exceptions import IdentifierChanged
from tests.support.drf.models import Customer, Order, OrderDetail, Payment, Product, ProductLine


class FormCharField(serializers.CharField):
    """An empty form value sets a nullable string to null (DRF keeps "" where blank is allowed)."""

    def get_value(self, dictionary: Any) -> Any:
        value = super().get_value(dictionary)
        if value == "" and self.allow_null and html.is_html_input(dictionary):
            return None
        return value


class ShopSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose identifier cannot change and whose PUT replaces the whole item."""

    serializer_field_mapping: ClassVar[dict[type[models.Field[Any, Any]], type[serializers.Field]]] = {
        **serializers.ModelSerializer.serializer_field_mapping,
        # `blank_kept`: DRF's own CharField, which keeps an empty form value as "" (the spec admits both)
        **({} if has("blank_kept") else {models.CharField: FormCharField, models.TextField: FormCharField}),
    }
    # The defect of `writable_pk`: without this check Django saves a renamed item as a new row.
    immutable_identifier = not has("writable_pk")

    def to_internal_value(self, data: Any) -> Any:
        if self.instance is not None and self.immutable_identifier and isinstance(data, Mapping):
            self.refuse_another_identifier(data)
        return super().to_internal_value(data)

    def refuse_another_identifier(self, data: Mapping[str, Any]) -> None:
        """409 before anything is validated or saved when the body names another item than the path."""
        field = self.fields[self.Meta.model._meta.pk.name]
        raw = field.get_value(data)
        if raw is empty or raw is None:
            return
        try:
            value = field.to_internal_value(raw.strip() if isinstance(raw, str) else raw)
        except serializers.ValidationError:
            return  # not a valid identifier at all: the field's own validation answers 400
        if value != self.instance.pk:
            raise IdentifierChanged()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """A PUT is a full replacement: an optional field it leaves out becomes null (DRF would keep it)."""
        if self.instance is not None and not self.partial:
            for name, field in self.fields.items():
                if not field.read_only and field.allow_null and name not in attrs:
                    attrs[name] = None
        return attrs


class ProductLineSerializer(ShopSerializer):
    class Meta:
        model = ProductLine
        fields = "__all__"
        read_only_fields = ("image",)


class ProductSerializer(ShopSerializer):
    class Meta:
        model = Product
        fields = "__all__"


class CustomerSerializer(ShopSerializer):
    class Meta:
        model = Customer
        fields = "__all__"


class OrderDetailSerializer(serializers.ModelSerializer):
    class Meta:
        model = OrderDetail
        fields = "__all__"


class OrderSerializer(serializers.ModelSerializer):
    class Meta:
        model = Order
        fields = "__all__"


class PaymentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Payment
        fields = "__all__"


# The defect of `patch_resets`: a normalisation in validate() that assumes the field was sent.


class ResettingProductLineSerializer(ProductLineSerializer):
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        attrs["htmldescription"] = attrs.get("htmldescription") or None  # "store empty HTML as null"
        return attrs


class ResettingProductSerializer(ProductSerializer):
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        attrs["productscale"] = attrs.get("productscale", "1:18").replace("/", ":")  # "1/18" -> "1:18"
        return attrs


class ResettingCustomerSerializer(CustomerSerializer):
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        attrs["addressline2"] = attrs.get("addressline2") or None  # "store an empty line as null"
        return attrs
