from django.urls import path

from verification.apis import VerifyApi

urlpatterns = [
    path("verify", VerifyApi.as_view(), name="api-verify"),
]
