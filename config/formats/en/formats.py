"""Dates and times as the portal shows them (24-hour), for the admin too: Django's English formats
say "Nov. 24, 2026, 3:04 p.m.", the portal "24 Nov 2026, 15:04"."""

DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
DATE_FORMAT = "j M Y"
