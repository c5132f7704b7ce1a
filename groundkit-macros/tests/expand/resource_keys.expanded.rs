/// A document by name.
pub async fn doc(ctx: &Ctx, params: DocParams) -> Result<Content, Error> {
    ctx.doc(&params.name)
}
#[doc(hidden)]
#[::my_framework::gk::__private::linkme::distributed_slice(
    ::my_framework::gk::__private::RESOURCES
)]
#[linkme(crate = ::my_framework::gk::__private::linkme)]
static __GROUNDKIT_RESOURCE_DOC: ::my_framework::gk::__private::ResourceSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(params: &DocParams) {
        ::my_framework::gk::__private::assert_context::<Ctx>();
        ::my_framework::gk::__private::assert_request::<DocParams>();
        ::my_framework::gk::__private::assert_resource_return::<
            Result<Content, Error>,
        >();
        ::my_framework::gk::__private::path_param(&params.name);
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::my_framework::gk::__private::ErasedContext,
        arguments: ::my_framework::gk::__private::serde_json::Value,
        call: ::my_framework::gk::__private::RequestContext,
    ) -> ::my_framework::gk::__private::BoxFuture<
        'a,
        ::my_framework::gk::__private::core::result::Result<
            ::my_framework::gk::__private::Content,
            ::my_framework::gk::__private::Error,
        >,
    > {
        ::my_framework::gk::__private::std::boxed::Box::pin(async move {
            let context = ::my_framework::gk::__private::downcast_context::<
                Ctx,
            >(context)?;
            let params = ::my_framework::gk::__private::parse_arguments::<
                DocParams,
            >(arguments)?;
            ::my_framework::gk::__private::ResourceReturn::into_content(
                doc(context, params).await,
            )
        })
    }
    ::my_framework::gk::__private::ResourceSpec::new::<
        ::my_framework::gk::__private::ReadOnly,
    >(::my_framework::gk::__private::ResourceParts {
        name: "document",
        title: ::my_framework::gk::__private::core::option::Option::Some("A document"),
        icon: ::my_framework::gk::__private::core::option::Option::None,
        summary: "A document by name.",
        description: "A document by name.",
        mime_type: "text/markdown",
        uri: ::my_framework::gk::__private::UriTemplate {
            template: "docs://{name}",
            scheme: "docs",
            segments: &[::my_framework::gk::__private::Segment::Var("name")],
        },
        route: ::my_framework::gk::__private::RestRoute {
            method: ::my_framework::gk::__private::HttpMethod::Get,
            path: "/resources/docs/{name}",
            params: &["name"],
        },
        context: ::my_framework::gk::__private::type_id::<Ctx>,
        context_name: ::my_framework::gk::__private::core::any::type_name::<Ctx>,
        params_schema: ::my_framework::gk::__private::input_schema::<DocParams>,
        completers: &[],
        handler: __groundkit_handler,
    })
};
