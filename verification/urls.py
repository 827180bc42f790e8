from django.urls import path

from verification.apis import VerificationApi, VerifyApi, VerifyBatchApi

urlpatterns = [
    path("verify", VerifyApi.as_view(), name="api-verify"),
    path("verify/batch", VerifyBatchApi.as_view(), name="api-verify-batch"),
    path("verifications/<str:verification_id>", VerificationApi.as_view(), name="api-verification"),
]
