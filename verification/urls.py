from django.urls import path

from verification.apis import VerifyApi, VerifyBatchApi

urlpatterns = [
    path("verify", VerifyApi.as_view(), name="api-verify"),
    path("verify/batch", VerifyBatchApi.as_view(), name="api-verify-batch"),
]
