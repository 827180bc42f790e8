from django.urls import path

from billing import views

urlpatterns = [
    path("billing", views.billing, name="billing"),
]
