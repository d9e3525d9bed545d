"""What a platform team watches, the mock's Prometheus instruments (`instruments`), at the bottom.

Every layer may count into them, and they import nothing of the mock. The layers that serve them are
in `control/`. They are the probes, the metrics route and the request observer.
"""
