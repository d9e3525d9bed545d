"""What a platform team watches: the mock's Prometheus instruments (`instruments`), at the bottom.

Every layer may count into them; they import nothing of the mock. The layers that serve them (the
probes, the metrics route, the request observer) are in `control/`.
"""
